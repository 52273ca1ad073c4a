"""A strict YAML reader for config files, and the words to explain what YAML did.

PyYAML follows YAML 1.1: `yes`, `no`, `on`, `off` become booleans and `1e3` a number, so an
agent called `no` arrives as `False`; and a key given twice silently keeps the last value.
This reader refuses duplicate keys and keys that are not text, and keeps the node tree so that
a validation error can say which YAML scalar became what, and suggest quoting it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode


class YAMLProblem(ValueError):
    """The text cannot be read as a config; the message is one line (without the file name)."""


_TAG_WORDS = {
    "tag:yaml.org,2002:bool": "the boolean",
    "tag:yaml.org,2002:int": "the number",
    "tag:yaml.org,2002:float": "the number",
    "tag:yaml.org,2002:null": "null (nothing)",
    "tag:yaml.org,2002:timestamp": "the date",
}


def _what_yaml_did(node: ScalarNode, value: Any) -> str | None:
    """E.g. "YAML read `no` (line 4) as the boolean false; quote it ('no') to mean the text"."""
    words = _TAG_WORDS.get(node.tag)
    if words is None or node.style in ("'", '"'):
        return None
    shown = "" if value is None else f" {str(value).lower() if isinstance(value, bool) else value}"
    return (
        f"YAML read `{node.value}` (line {node.start_mark.line + 1}) as {words}{shown}; "
        f"quote it ('{node.value}') to mean the text"
    )


class _StrictLoader(yaml.SafeLoader):
    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[Any, int] = {}
        for key_node, _value in node.value:
            if not isinstance(key_node, ScalarNode):
                raise YAMLProblem(
                    f"line {key_node.start_mark.line + 1}: a key must be plain text, not a "
                    "list or mapping"
                )
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise YAMLProblem(f"key at line {line}: {_what_yaml_did(key_node, key)}")
            if key in seen:
                raise YAMLProblem(
                    f"key {key!r} appears twice (lines {seen[key]} and {line}); keep one"
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> tuple[Any, Node | None]:
    """The data and its node tree. Raises YAMLProblem for syntax errors, duplicate keys and
    keys that YAML turned into something other than text."""
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise YAMLProblem(f"not valid YAML: {where}{err.problem or err}") from None
    except yaml.YAMLError as err:
        raise YAMLProblem(f"not valid YAML: {' '.join(str(err).split())}") from None
    except RecursionError:  # PyYAML reads nested lists and mappings recursively
        raise YAMLProblem(
            "lists or mappings nested too deeply to read (hundreds of levels); no config needs "
            "more than a few"
        ) from None
    finally:
        loader.dispose()
    return data, node


def explain_at(root: Node | None, loc: Sequence[int | str]) -> str | None:
    """What YAML did to the scalar at `loc` (a pydantic error location), when it turned text
    into a boolean, number, null or date; None otherwise."""
    node = root
    for part in loc:
        if isinstance(node, MappingNode):
            found = [v for k, v in node.value if isinstance(k, ScalarNode) and k.value == str(part)]
            # pydantic puts the tag of a union member (e.g. "openai") into the location: a part
            # with no key of that name is skipped
            node = found[0] if found else node
        elif isinstance(node, SequenceNode) and isinstance(part, int):
            if not 0 <= part < len(node.value):
                return None
            node = node.value[part]
    if not isinstance(node, ScalarNode):
        return None
    value = yaml.SafeLoader(node.value).get_single_data() if node.value else None
    return _what_yaml_did(node, value)
