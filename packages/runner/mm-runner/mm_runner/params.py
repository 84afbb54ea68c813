"""The parameter file (docs/runner.md): checked against the JSON Schema generated from the
server's zod schema (schema/mm-runner-1.schema.json, one source of truth), with its defaults
filled in. Only the subset of JSON Schema that file uses is understood here."""

import json
import math
import os

SCHEMA_ID = "mm-runner/1"
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schema", "mm-runner-1.schema.json")


class ParameterError(Exception):
    """A problem with the parameter file: `path` is a JSON path such as `$.preprocess.size[0]`."""

    def __init__(self, path, message):
        super().__init__("%s: %s" % (path, message))
        self.path = path
        self.message = message


def load_schema():
    with open(SCHEMA_FILE, "r", encoding="utf-8") as f:
        return json.load(f)


def _key_path(path, key):
    if isinstance(key, int):
        return "%s[%d]" % (path, key)
    if key and (key[0].isalpha() or key[0] == "_") and all(c.isalnum() or c == "_" for c in key):
        return "%s.%s" % (path, key)
    return "%s[%s]" % (path, json.dumps(key))


def _type_ok(value, expected):
    if expected == "object":
        return isinstance(value, dict)
    if expected == "array":
        return isinstance(value, list)
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (isinstance(value, float) and value.is_integer())
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if expected == "null":
        return value is None
    return True


def _article(word):
    return ("an " if word[0] in "aeiou" else "a ") + word


def check(value, schema, path="$"):
    """Checks `value` against `schema` and returns it with defaults filled in (a new object).
    Raises ParameterError at the first problem."""
    expected = schema.get("type")
    if expected is not None and not _type_ok(value, expected):
        raise ParameterError(path, "must be %s" % ("a whole number" if expected == "integer" else _article(expected)))
    if "const" in schema and value != schema["const"]:
        raise ParameterError(path, "must be %s" % json.dumps(schema["const"]))
    if "enum" in schema and value not in schema["enum"]:
        raise ParameterError(path, "must be one of %s" % ", ".join(json.dumps(v) for v in schema["enum"]))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ParameterError(path, "must be at least %s" % schema["minimum"])
        if "maximum" in schema and value > schema["maximum"]:
            raise ParameterError(path, "must be at most %s" % schema["maximum"])
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            raise ParameterError(path, "must be more than %s" % schema["exclusiveMinimum"])
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            raise ParameterError(path, "must be less than %s" % schema["exclusiveMaximum"])
        if expected == "integer":
            value = int(value)
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise ParameterError(path, "must not be empty" if schema["minLength"] == 1 else "must be at least %d characters" % schema["minLength"])
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise ParameterError(path, "must be at most %d characters" % schema["maxLength"])
    if isinstance(value, list):
        prefix = schema.get("prefixItems", [])
        items = schema.get("items", True)
        out = []
        for i, item in enumerate(value):
            if i < len(prefix):
                out.append(check(item, prefix[i], _key_path(path, i)))
            elif items is False:
                break  # reported as too many items below
            elif isinstance(items, dict):
                out.append(check(item, items, _key_path(path, i)))
            else:
                out.append(item)
        if "minItems" in schema and len(value) < schema["minItems"]:
            n = schema["minItems"]
            raise ParameterError(path, "must have at least %d item%s" % (n, "" if n == 1 else "s"))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            n = schema["maxItems"]
            raise ParameterError(path, "must have at most %d item%s" % (n, "" if n == 1 else "s"))
        value = out
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            for key in value:
                if key not in props:
                    raise ParameterError(_key_path(path, key), "unknown field")
        for key in schema.get("required", []):
            if key not in value:
                raise ParameterError(_key_path(path, key), "is required")
        out = {}
        for key, sub in props.items():
            if key in value:
                out[key] = check(value[key], sub, _key_path(path, key))
            elif "default" in sub:
                out[key] = check(json.loads(json.dumps(sub["default"])), sub, _key_path(path, key))
        value = out
    return value


def check_across(params):
    """The rules across fields that JSON Schema does not say (the zod schema's superRefine)."""
    task = params["task"]
    if task == "command" and "command" not in params:
        raise ParameterError("$.command", 'is required when task is "command"')
    if task == "detection" and "detection" not in params:
        raise ParameterError("$.detection", 'is required when task is "detection" (at least its family)')
    det = params.get("detection")
    if det:
        for i, a in enumerate(det.get("anchors") or []):
            if len(a) % 2:
                raise ParameterError("$.detection.anchors[%d]" % i, "must hold w, h pairs (an even count)")
        if det.get("anchors") and det.get("strides") and len(det["anchors"]) != len(det["strides"]):
            raise ParameterError("$.detection.anchors", "has %d scales but strides has %d" % (len(det["anchors"]), len(det["strides"])))
    if "command" in params and params["command"] and params["command"][0] == "":
        raise ParameterError("$.command", "the program (first item) must not be empty")
    return params


def parse_parameters(text, schema=None):
    """The parameter file's text → its checked values with defaults. Raises ParameterError."""
    try:
        raw = json.loads(text)
    except ValueError as e:
        raise ParameterError("$", "is not JSON (%s)" % e)
    if not isinstance(raw, dict):
        raise ParameterError("$", "must be a JSON object")
    if raw.get("schema") != SCHEMA_ID:
        raise ParameterError("$.schema", 'must be "%s" (mm-runner reads only this version)' % SCHEMA_ID)
    return check_across(check(raw, schema or load_schema()))


def read_parameters(path):
    """The parameter file at `path` (MM_PARAMETER), or the defaults of a bare classification
    run when there is none. At most 4 MiB is read."""
    if not path:
        raise ParameterError("$", "there is no parameter file: mm-runner needs one (MM_PARAMETER) saying at least its task")
    with open(path, "rb") as f:
        data = f.read(4 * 1024 * 1024 + 1)
    if len(data) > 4 * 1024 * 1024:
        raise ParameterError("$", "the parameter file is larger than 4 MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ParameterError("$", "is not UTF-8 text")
    return parse_parameters(text)
