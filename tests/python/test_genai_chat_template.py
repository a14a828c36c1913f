"""nxrt.genai's chat templates (a Jinja2 subset in C++) against Python's jinja2 configured as transformers'
apply_chat_template configures it (trim_blocks, lstrip_blocks, loop controls, tojson without HTML escaping,
raise_exception). The templates below are written here in the styles of the common model families (system prompt
handling, role alternation checks, tool definitions and calls, role renaming) plus one that exercises every
supported filter, test and operator; each is rendered for a few hundred random conversations."""

import json
import random

import pytest

jinja2 = pytest.importorskip("jinja2")
import jinja2.ext  # noqa: E402
from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: E402

from nxrt import _nxrt  # noqa: E402

SPECIALS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}

TEMPLATES = {
    "system_first": """{{- bos_token }}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "You are a helpful assistant." %}
{%- endif %}
{{- "<|start|>system<|sep|>\\n\\n" + system_message + "<|end|>" }}
{%- for message in messages %}
    {{- '<|start|>' + message['role'] + '<|sep|>\\n\\n' + message['content'] | trim + '<|end|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start|>assistant<|sep|>\\n\\n' }}
{%- endif %}
""",
    "alternating": "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != "
                   "(loop.index0 % 2 == 0) %}{{ raise_exception('roles must alternate between user and assistant') }}"
                   "{% endif %}{% if message['role'] == 'user' %}{{ '[Q] ' + message['content'] + ' [/Q]' }}"
                   "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% else %}"
                   "{{ raise_exception('only user and assistant roles') }}{% endif %}{% endfor %}",
    "tools": """{%- if tools %}
{{- '<|sys|>\\n' }}{% if messages[0].role == 'system' %}{{ messages[0].content + '\\n\\n' }}{% endif %}
{{- "# Tools\\n" }}
{%- for tool in tools %}
{{- "\\n" }}{{- tool | tojson }}
{%- endfor %}
{{- "\\n<|end|>\\n" }}
{%- elif messages[0].role == 'system' %}
{{- '<|sys|>\\n' + messages[0].content + '<|end|>\\n' }}
{%- endif %}
{%- set ns = namespace(last_user=-1) %}
{%- for m in messages %}{% if m.role == 'user' %}{% set ns.last_user = loop.index0 %}{% endif %}{% endfor %}
{%- for message in messages %}
  {%- if message.role == "user" or (message.role == "system" and not loop.first) %}
{{- '<|im|>' + message.role + '\\n' + message.content + '<|end|>' + '\\n' }}
  {%- elif message.role == "assistant" %}
{{- '<|im|>assistant' }}{% if message.content %}{{ '\\n' + message.content }}{% endif %}
    {%- for call in message.tool_calls | default([]) %}
{{- '\\n<call>\\n{"name": "' + call.function.name + '", "arguments": ' + call.function.arguments | tojson + '}\\n</call>' }}
    {%- endfor %}
{{- '<|end|>\\n' }}
  {%- elif message.role == "tool" %}
{{- '<|im|>tool\\n' + message.content ~ '<|end|>\\n' }}{% if loop.index0 > ns.last_user %}{{ '(after ' ~ ns.last_user ~ ')' }}{% endif %}
  {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im|>assistant\\n' }}{%- endif %}
""",
    "renamed_roles": "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set first = messages[0]['content'] + "
                     "'\\n\\n' %}{% set loop_messages = messages[1:] %}{% else %}{% set first = '' %}{% set "
                     "loop_messages = messages %}{% endif %}{% for message in loop_messages %}{% if (message['role'] "
                     "== 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}"
                     "{{ '<turn>' + role + '\\n' + (first if loop.first else '') + message['content'] | trim + "
                     "'<end>\\n' }}{% endfor %}{% if add_generation_prompt %}{{'<turn>model\\n'}}{% endif %}",
    "features": """{# every supported construct #}
Count: {{ messages | length }} {{ messages | selectattr('role', 'equalto', 'user') | list | length }}
{%- for m in messages if m.role != 'system' %}
[{{ loop.index }}/{{ loop.length }}|{{ loop.revindex }}]{{ m.role | upper }}:{{ m.content[:10] | replace(' ', '_') }}{% if loop.first %}(first){% endif %}{% if loop.last %}(last){% endif %}
{%- if m.content is string and 'stop' in m.content %}{% break %}{% endif %}
{%- else %}
none
{%- endfor %}
{{ messages | map(attribute='role') | join(',') }} {{ messages | map(attribute='role') | unique | sort | join('+') }}
{%- set d = {'a': 1, 'b': [1, 2, 3]} %}
{{ d.get('a') }} {{ d.get('z', 'zz') }} {{ d['b'][-1] }} {{ d.b | last }} {% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}
{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 * 3 + 1 }} {{ 'a' ~ 1 ~ none ~ true }}
{{ (3 is odd) }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ x is defined }} {{ none is none }} {{ d is mapping }}
{{ 'Hello World'.split() }} {{ ' pad '.strip() }}|{{ 'a,b,,c'.split(',') }} {{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'bc')) }}
{{ 'x' if messages else 'y' }} {{ missing | default('dflt') }} {{ '' | default('e', true) }} {{ 3.5 | int }} {{ '42' | int + 1 }} {{ 2 | float }}
{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %} {{ range(2, 8, 3) | list }}
{{ messages[-1].content | title }} {{ 'mIxEd' | lower }} {{ 'word' | capitalize }} {{ [3, 1, 2] | sort | join }} {{ ['b', 'a'] | sort(reverse=true) }}
{{ {'k': [1, 'two', none, true, 1.5]} | tojson }} {{ [1, {'a': 'x"y'}] | tojson(indent=2) }} {{ 0.1 + 0.2 }} {{ 1e20 * 10 }}
{%- if 'user' not in messages | map(attribute='role') | list %} no users{% endif %}
    {%+ if true %}kept indent{% endif %}
  {%- if bos_token is defined -%}  stripped  {%- endif %}
""",
}

CONTENTS = ["Hello!", "  padded text  ", "multi\nline\ncontent", "quotes ' and \" here", "naïve café 日本語 😀",
            "stop here", "", "a" * 40, "tabs\tand\tspaces", "{{ not a template }}", "ends with newline\n"]


def transformers_like_environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


def conversation(rng, alternate):
    messages = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": rng.choice(CONTENTS)})
    for turn in range(rng.randint(1, 5)):
        role = ("user" if turn % 2 == 0 else "assistant") if alternate or rng.random() < 0.8 else "tool"
        message = {"role": role, "content": rng.choice(CONTENTS)}
        if role == "assistant" and rng.random() < 0.3:
            message["tool_calls"] = [{"type": "function", "function": {"name": "get_weather",
                                                                       "arguments": {"city": rng.choice(CONTENTS)}}}]
        messages.append(message)
    return messages


TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                           "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_rendering_matches_jinja2(name):
    env = transformers_like_environment()
    reference = env.from_string(TEMPLATES[name])
    ours = _nxrt.GenaiChatFormatter.from_source(TEMPLATES[name], json.dumps(SPECIALS))
    rng = random.Random(name)
    rendered = errors = 0
    for case in range(300):
        messages = conversation(rng, alternate=case % 3 != 0)
        tools = TOOLS if name == "tools" and case % 2 else None
        generation = case % 4 != 0
        try:
            want = reference.render(messages=messages, tools=tools, documents=None, add_generation_prompt=generation,
                                    **SPECIALS)
        except jinja2.exceptions.TemplateError as error:
            with pytest.raises(Exception, match="raise_exception: " + str(error)):
                ours.apply(json.dumps(messages), generation, json.dumps(tools) if tools else "")
            errors += 1
            continue
        got = ours.apply(json.dumps(messages), generation, json.dumps(tools) if tools else "")
        assert got == want, f"{name}, case {case}: {messages}"
        rendered += 1
    assert rendered >= 100
    if name == "alternating":
        assert errors > 0  # the role check fires on the cases that break the alternation


@pytest.mark.parametrize("source, message", [
    ("{% if x %}open", "missing '{% endif %}'"),
    ("{{ 1 + }}", "expected an expression"),
    ("{% macro m() %}{% endmacro %}", "'{% macro %}' is not supported"),
    ("{{ x", "unclosed '{{'"),
    ("{{ 'abc }}", "unclosed '{{'"),
    ("{{ x !~ y }}", "unexpected character '!'"),
])
def test_template_errors_name_the_line(source, message):
    with pytest.raises(Exception, match="line 1: " + message.replace("{", "\\{").replace("}", "\\}")):
        _nxrt.GenaiChatFormatter.from_source(source)


def test_render_errors_name_the_line():
    formatter = _nxrt.GenaiChatFormatter.from_source("line one\n{{ missing.attribute }}")
    with pytest.raises(Exception, match="line 2: an undefined value has no attribute 'attribute'"):
        formatter.apply("[]", True)
    with pytest.raises(Exception, match="messages: a JSON list is expected"):
        formatter.apply("{}", True)


@pytest.mark.parametrize("source, message", [
    ("{{ " + "(" * 150 + "1" + ")" * 150 + " }}", "nested deeper than 100"),
    ("{{ " + "-" * 150 + "1 }}", "nested deeper than 100"),
    ("{% if 1 %}" * 150 + "{% endif %}" * 150, "nested deeper than 100"),
])
def test_deep_templates_are_refused(source, message):
    with pytest.raises(Exception, match=message):
        _nxrt.GenaiChatFormatter.from_source(source)


@pytest.mark.parametrize("source, message", [
    ("{% for i in range(1000000) %}{% for j in range(1000000) %}{% endfor %}{% endfor %}", "more than 2M steps"),
    ("{% set ns = namespace(s='abcdefgh') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", "64 MiB"),
    ("{{ 'x' * 100000000000 }}", "64 MiB"),
    ("{% for i in range(100000) %}{{ 'abcdefghij' * 1000 }}{% endfor %}", "64 MiB"),
])
def test_runaway_templates_stop_with_an_error(source, message):
    formatter = _nxrt.GenaiChatFormatter.from_source(source)
    with pytest.raises(Exception, match=message):
        formatter.apply("[]", True)


@pytest.mark.parametrize("source, want", [
    ("{{ 'héllo' | first }}{{ '日本' | last }}{{ 'héllo'[1] }}{{ 'héllo'[-4:] }}", "h本ééllo"),
    ("{{ range(0, 9223372036854775807, 4611686018427387904) | list }}", "[0, 4611686018427387904]"),
    ("{{ '1e3' | int }} {{ 'nan' | int }} {{ -9223372036854775807 - 1 }} {{ ' 42 ' | int }}",
     "1000 0 -9223372036854775808 42"),
    ("{{ 1.0 == 1 }} {{ 1.5 == 1 }} {{ 2 == 2.0 }}", "True False True"),
])
def test_edge_values_match_jinja2(source, want):
    env = transformers_like_environment()
    assert env.from_string(source).render() == want
    assert _nxrt.GenaiChatFormatter.from_source(source).apply("[]", True) == want


@pytest.mark.parametrize("source, message", [
    ("{{ 9223372036854775807 + 1 }}", "integer overflow in \\+"),
    ("{{ (-9223372036854775807 - 1) // -1 }}", "integer overflow in //"),
    ("{{ [1] | tojson(indent=1000) }}", "tojson indent above 64"),
])
def test_values_python_would_make_bigger_are_errors(source, message):
    formatter = _nxrt.GenaiChatFormatter.from_source(source)
    with pytest.raises(Exception, match=message):
        formatter.apply("[]", True)
