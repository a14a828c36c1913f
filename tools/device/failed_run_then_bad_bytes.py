# Python 3.12 crash probe: a failed run (wrong dtype), a missing file, then bad model bytes (segfaulted there).
import numpy as np, nxrt
s = nxrt.InferenceSession(nxrt.builtin_model("simple_add"))
for step in ("bad dtype run", "absent file", "bad bytes"):
    try:
        if step == "bad dtype run":
            s.run(None, {i.name: np.ones(4, np.int64) for i in s.get_inputs()})
        elif step == "absent file":
            nxrt.InferenceSession("/nonexistent.onnx")
        else:
            nxrt.InferenceSession(b"\xff\xff\xff\xff not a model")
    except Exception as e:
        print("raised", type(e).__name__, flush=True)
