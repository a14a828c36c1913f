"""The `nxrt` command line: per-command --help, errors for bad flags, and `nxrt run --batch`."""
import re
import subprocess

import numpy as np
import pytest

# Options each command's --help must list (the full set the command accepts).
COMMAND_OPTIONS = {
    "info": ["--help"],
    "run": ["--input", "--dim", "--threads", "--repeat", "--seed", "--output-dir", "--output-format", "--quiet",
            "--profile", "--batch", "--help"],
    "export-builtin": ["--help"],
    "generate": ["--prompt", "--prompt-ids", "--chat", "--system", "--interactive", "--max-new-tokens", "--temperature", "--top-k", "--top-p", "--min-p",
                 "--repetition-penalty", "--seed", "--threads", "--quiet", "--help"],
}
STATUS_LINE = re.compile(r"^nxrt-batch: line (\d+): (ok|error: (.*))$")


def nxrt(cli, *args, **kwargs):
    return subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, timeout=120, **kwargs)


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_top_level_help_lists_every_command(nxrt_cli, flag):
    done = nxrt(nxrt_cli, flag)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: nxrt COMMAND")
    for command in COMMAND_OPTIONS:
        assert re.search(rf"^  {command}\b", done.stdout, re.M), f"{command} missing from:\n{done.stdout}"
    assert "nxrt COMMAND --help" in done.stdout
    assert done.stderr == ""


@pytest.mark.parametrize("command", sorted(COMMAND_OPTIONS))
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_command_help(nxrt_cli, command, flag):
    done = nxrt(nxrt_cli, command, flag)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith(f"usage: nxrt {command}")
    for option in COMMAND_OPTIONS[command]:
        assert re.search(rf"^  (-h, )?{option}\b", done.stdout, re.M), f"{option} missing from:\n{done.stdout}"


def test_help_wins_over_other_arguments(nxrt_cli):
    done = nxrt(nxrt_cli, "run", "builtin:mlp", "--bogus", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: nxrt run")


def test_help_command_matches_flag(nxrt_cli):
    assert nxrt(nxrt_cli, "help", "run").stdout == nxrt(nxrt_cli, "run", "--help").stdout


@pytest.mark.parametrize("args, flag", [
    (["run", "--frobnicate"], "--frobnicate"),
    (["run", "builtin:mlp", "-x"], "-x"),
    (["info", "builtin:mlp", "--bogus"], "--bogus"),
    (["export-builtin", "--out", "mlp", "m.onnx"], "--out"),
])
def test_unknown_flag_is_named(nxrt_cli, args, flag):
    done = nxrt(nxrt_cli, *args)
    assert done.returncode != 0
    assert done.stdout == ""
    assert "INVALID_ARGUMENT" in done.stderr
    assert f"unknown option '{flag}'" in done.stderr
    assert f"nxrt {args[0]} --help" in done.stderr


@pytest.mark.parametrize("args, flag", [
    (["run", "builtin:mlp", "--input"], "--input"),
    (["run", "builtin:mlp", "--seed"], "--seed"),
    (["run", "builtin:mlp", "--output-dir", "--quiet"], "--output-dir"),
    (["run", "--batch"], "--batch"),
])
def test_missing_value_names_the_flag(nxrt_cli, args, flag):
    done = nxrt(nxrt_cli, *args)
    assert done.returncode != 0
    assert f"{flag} needs a value" in done.stderr
    assert "nxrt run --help" in done.stderr


def test_operand_errors_point_to_help(nxrt_cli):
    missing = nxrt(nxrt_cli, "info")
    assert missing.returncode != 0 and "missing MODEL" in missing.stderr and "nxrt info --help" in missing.stderr
    extra = nxrt(nxrt_cli, "info", "builtin:mlp", "extra")
    assert extra.returncode != 0 and "unexpected argument 'extra'" in extra.stderr


def test_option_with_equals_sign(nxrt_cli, tmp_path):
    done = nxrt(nxrt_cli, "run", "builtin:simple_add", "--quiet", f"--output-dir={tmp_path / 'out'}")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["z.npy"]


def write_inputs(tmp_path):
    np.save(tmp_path / "x.npy", np.arange(4, dtype=np.float32))
    np.save(tmp_path / "y.npy", np.full(4, 10, dtype=np.float32))


def single_run_output(cli, tmp_path):
    """z of builtin:simple_add on x.npy and y.npy, from a plain `nxrt run`."""
    done = nxrt(cli, "run", "builtin:simple_add", "--input", f"x={tmp_path / 'x.npy'}", "--input",
                f"y={tmp_path / 'y.npy'}", "--output-dir", tmp_path / "single")
    assert done.returncode == 0, done.stderr
    assert "z: float [4]" in done.stdout
    return np.load(tmp_path / "single" / "z.npy")


def test_batch_reports_each_line_and_continues_after_an_error(nxrt_cli, tmp_path):
    write_inputs(tmp_path)
    want = single_run_output(nxrt_cli, tmp_path)
    assert want.shape == (4,) and len(set(want.tolist())) == 4
    inputs = f"--input x={tmp_path / 'x.npy'} --input y={tmp_path / 'y.npy'}"
    batch = tmp_path / "batch.txt"
    batch.write_text(
        "# comment and blank lines are skipped but counted\n"
        "\n"
        f"builtin:simple_add {inputs} --output-dir {tmp_path / 'first'}\n"
        f"{tmp_path / 'missing.onnx'} --output-dir {tmp_path / 'second'}\n"
        f"builtin:simple_add {inputs} --output-dir '{tmp_path / 'third dir'}'\n")
    done = nxrt(nxrt_cli, "run", "--batch", batch, "--quiet")
    assert done.returncode == 1
    assert done.stderr == ""
    statuses = [STATUS_LINE.match(line) for line in done.stdout.splitlines()]
    assert all(statuses), done.stdout
    assert [(m[1], m[2] == "ok") for m in statuses] == [("3", True), ("4", False), ("5", True)]
    assert "NO_SUCHFILE" in statuses[1][3] and "missing.onnx" in statuses[1][3]
    np.testing.assert_array_equal(np.load(tmp_path / "first" / "z.npy"), want)
    assert not (tmp_path / "second").exists()
    np.testing.assert_array_equal(np.load(tmp_path / "third dir" / "z.npy"), want)


def test_batch_from_stdin_with_bad_lines(nxrt_cli, tmp_path):
    write_inputs(tmp_path)
    lines = [
        f"builtin:simple_add --input x={tmp_path / 'x.npy'} --frobnicate",
        "builtin:simple_add --input 'x=unterminated",
        "builtin:simple_add --batch other.txt",
        f"builtin:simple_add --quiet --input x={tmp_path / 'x.npy'} --input y={tmp_path / 'y.npy'}",
    ]
    done = nxrt(nxrt_cli, "run", "--batch", "-", input="\n".join(lines) + "\n")
    assert done.returncode == 1
    statuses = [STATUS_LINE.match(line) for line in done.stdout.splitlines()]
    assert all(statuses), done.stdout
    assert [m[1] for m in statuses] == ["1", "2", "3", "4"]
    assert "unknown option '--frobnicate'" in statuses[0][3]
    assert "unterminated '" in statuses[1][3]
    assert "--batch is not allowed in a batch line" in statuses[2][3]
    assert statuses[3][2] == "ok"


def test_batch_exit_code_is_zero_when_every_line_passes(nxrt_cli, tmp_path):
    batch = tmp_path / "batch.txt"
    batch.write_text("builtin:simple_add\nbuiltin:mlp --seed 3\n")
    done = nxrt(nxrt_cli, "run", "--batch", batch, "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["nxrt-batch: line 1: ok", "nxrt-batch: line 2: ok"]


def test_batch_rejects_a_model_beside_it(nxrt_cli, tmp_path):
    batch = tmp_path / "batch.txt"
    batch.write_text("builtin:mlp\n")
    done = nxrt(nxrt_cli, "run", "builtin:mlp", "--batch", batch)
    assert done.returncode != 0
    assert "--batch takes MODEL from each line" in done.stderr
    assert nxrt(nxrt_cli, "run", "--batch", tmp_path / "absent.txt").stderr.count("NO_SUCHFILE") == 1


def test_info_lists_custom_domains_and_ops_without_a_kernel(nxrt_cli, tmp_path):
    """Before any session: the imported custom domains, and the ops no CPU kernel covers at their opset."""
    from onnx import TensorProto, helper

    nodes = [helper.make_node("FastGelu", ["x"], ["a"], domain="com.microsoft"),
             helper.make_node("Frobnicate", ["a"], ["b"], domain="com.example"),
             helper.make_node("Frobnicate", ["b"], ["c"], domain="com.example"),
             helper.make_node("Relu", ["c"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1),
                                             helper.make_opsetid("com.example", 3)])
    path = tmp_path / "custom.onnx"
    path.write_bytes(model.SerializeToString())
    done = nxrt(nxrt_cli, "info", path)
    assert done.returncode == 0, done.stderr
    assert "custom domains: com.microsoft=1 com.example=3\n" in done.stdout
    missing = done.stdout.split("ops without a CPU kernel:")[1].split("graph:")[0]
    assert missing.split() == ["com.example.Frobnicate", "(opset", "3)", "2"], done.stdout
    builtin = nxrt(nxrt_cli, "info", "builtin:mlp")
    assert "custom domains: none" in builtin.stdout and "ops without a CPU kernel: none" in builtin.stdout


GENAI_FOLDER = __import__("pathlib").Path(__file__).resolve().parents[3] / "shared" / "genai" / "tiny-random-gpt2-fp32"


@pytest.mark.skipif(not GENAI_FOLDER.exists(), reason="the shared genai fixture is missing")
def test_generate_streams_the_greedy_text_and_reports_speeds(nxrt_cli):
    import nxrt.genai as genai
    done = nxrt(nxrt_cli, "generate", GENAI_FOLDER, "--prompt", ", the and of.", "--max-new-tokens", 12)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "".join(genai.generate(GENAI_FOLDER, ", the and of.", max_new_tokens=12)) + "\n"
    assert re.search(r"prompt: 5 tokens in .* tokens/s\); generated: 12 tokens in .* tokens/s\)", done.stderr)
    ids = nxrt(nxrt_cli, "generate", GENAI_FOLDER, "--prompt-ids", "11,262,290,286,13", "--max-new-tokens", 12)
    assert ids.returncode == 0 and ids.stdout == done.stdout
    sampled = [nxrt(nxrt_cli, "generate", GENAI_FOLDER, "--prompt-ids", "5,6", "--temperature", "0.9", "--seed", 4,
                    "--top-k", 3).stdout for _ in range(2)]
    assert sampled[0] == sampled[1]


@pytest.mark.parametrize("args, message", [
    (["/nonexistent/folder", "--prompt", "x"], "NO_SUCHFILE : /nonexistent/folder/genai_config.json"),
    ([str(GENAI_FOLDER)], "give one of --prompt and --prompt-ids"),
    ([str(GENAI_FOLDER), "--prompt-ids", "5,x"], "--prompt-ids must be token ids"),
    ([str(GENAI_FOLDER), "--prompt-ids", "5", "--temperature", "warm"], "--temperature needs a number"),
    ([str(GENAI_FOLDER), "--prompt", "Hello"], "token 15496 of sequence 0 is outside the vocabulary"),
    ([str(GENAI_FOLDER), "--prompt-ids", "5", "--chat"], "--chat needs --prompt"),
    ([str(GENAI_FOLDER), "--prompt", "x", "--interactive"], "--interactive reads the prompts from stdin"),
    ([str(GENAI_FOLDER), "--prompt", "x", "--chat"], "tokenizer_config.json: no chat_template"),
])
def test_generate_errors(nxrt_cli, args, message):
    done = nxrt(nxrt_cli, "generate", *args)
    assert done.returncode == 1
    assert message in done.stderr
