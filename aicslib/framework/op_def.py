"""Op definitions: the builder behind ``REGISTER_OP`` and the OpDef registry.

TensorFlow declares every op once in ``core/ops/*.cc``::

    REGISTER_OP("MatMul")
        .Input("a: T").Input("b: T").Output("product: T")
        .Attr("transpose_a: bool = false")
        .Attr("T: {half, bfloat16, float, double, int32}")
        .SetShapeFn(shape_inference::MatMulShape);

``register_op`` is the same chain in Python. Each ``.input/.output/.attr``
string is parsed the way ``core/framework/op_def_builder.cc`` parses it, so a
bad spec fails right at the call that wrote it.
"""
import re

from . import dtypes
from .errors import NotFoundError
from .source_location import caller_location

# Groups of types TF spells with one word in attr specs.
_TYPE_GROUPS = {
    "numbertype": ["half", "bfloat16", "float", "double", "int8", "int16", "int32", "int64", "uint8"],
    "realnumbertype": ["half", "bfloat16", "float", "double", "int8", "int16", "int32", "int64", "uint8"],
    "floatingpointtype": ["half", "bfloat16", "float", "double"],
    "quantizedtype": [],
    "all": None,
}
_SCALAR_ATTR_TYPES = ("string", "int", "float", "bool", "type", "shape", "tensor", "func")
_NAME_RE = r"[A-Za-z][A-Za-z0-9_]*"


class ArgDef:
    """One input or output argument: its name and how its dtype is determined."""

    __slots__ = ("name", "type", "type_attr", "number_attr", "type_list_attr", "is_ref")

    def __init__(self, name, type=None, type_attr=None, number_attr=None,
                 type_list_attr=None, is_ref=False):
        self.name = name
        self.type = type                      # a fixed DType
        self.type_attr = type_attr            # "T"
        self.number_attr = number_attr        # "N" for "N * T"
        self.type_list_attr = type_list_attr  # "Tlist" for list(type)
        self.is_ref = is_ref

    @property
    def is_list(self):
        return self.number_attr is not None or self.type_list_attr is not None

    def to_dict(self):
        d = {"name": self.name}
        if self.type is not None:
            d["type"] = self.type.datatype_name
        for key in ("type_attr", "number_attr", "type_list_attr"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        if self.is_ref:
            d["is_ref"] = True
        return d


class AttrDef:
    """One attr: type (``int``, ``list(int)``, ``type``...), default, allowed values, minimum."""

    __slots__ = ("name", "type", "default_value", "has_default", "allowed_values", "minimum")

    def __init__(self, name, type, default_value=None, has_default=False,
                 allowed_values=None, minimum=None):
        self.name = name
        self.type = type
        self.default_value = default_value
        self.has_default = has_default
        self.allowed_values = allowed_values
        self.minimum = minimum

    def to_dict(self):
        d = {"name": self.name, "type": self.type}
        if self.has_default:
            d["default_value"] = _attr_value_to_json(self.default_value)
        if self.allowed_values is not None:
            d["allowed_values"] = [_attr_value_to_json(v) for v in self.allowed_values]
        if self.minimum is not None:
            d["minimum"] = self.minimum
        return d


def _attr_value_to_json(value):
    if isinstance(value, dtypes.DType):
        return value.name
    if isinstance(value, (list, tuple)):
        return [_attr_value_to_json(v) for v in value]
    return value


class OpDef:
    """The finished definition of an op type, as ``tensorflow::OpDef``."""

    def __init__(self, name):
        self.name = name
        self.input_arg = []
        self.output_arg = []
        self.attr = []
        self.shape_fn = None
        self.is_stateful = False
        self.summary = ""
        self.registered_at = None  # (file, line) of the register_op call

    def get_attr_def(self, name):
        for a in self.attr:
            if a.name == name:
                return a
        return None

    def to_dict(self):
        return {"name": self.name,
                "input_arg": [a.to_dict() for a in self.input_arg],
                "output_arg": [a.to_dict() for a in self.output_arg],
                "attr": [a.to_dict() for a in self.attr],
                "is_stateful": self.is_stateful}

    def __str__(self):
        """TensorFlow's protobuf text format for an OpDef."""
        lines = [f'name: "{self.name}"']
        for tag, args in (("input_arg", self.input_arg), ("output_arg", self.output_arg)):
            for a in args:
                lines.append(tag + " {")
                lines.append(f'  name: "{a.name}"')
                if a.type is not None:
                    lines.append(f"  type: {a.type.datatype_name}")
                if a.type_attr:
                    lines.append(f'  type_attr: "{a.type_attr}"')
                if a.number_attr:
                    lines.append(f'  number_attr: "{a.number_attr}"')
                if a.type_list_attr:
                    lines.append(f'  type_list_attr: "{a.type_list_attr}"')
                if a.is_ref:
                    lines.append("  is_ref: true")
                lines.append("}")
        for a in self.attr:
            lines.append("attr {")
            lines.append(f'  name: "{a.name}"')
            lines.append(f'  type: "{a.type}"')
            if a.has_default:
                lines.append("  default_value {")
                lines.extend("    " + line for line in _text_attr_value(a.type, a.default_value))
                lines.append("  }")
            if a.minimum is not None:
                lines.append("  has_minimum: true")
                if a.minimum != 0:  # proto3 text format leaves out zero values
                    lines.append(f"  minimum: {a.minimum}")
            if a.allowed_values is not None:
                lines.append("  allowed_values {")
                lines.append("    list {")
                for v in a.allowed_values:
                    if isinstance(v, dtypes.DType):
                        lines.append(f"      type: {v.datatype_name}")
                    else:
                        lines.append(f'      s: "{_c_escape(v)}"')
                lines.append("    }")
                lines.append("  }")
            lines.append("}")
        if self.is_stateful:
            lines.append("is_stateful: true")
        return "\n".join(lines)

    __repr__ = __str__


def _c_escape(text):
    """Escapes a string as protobuf text format does (C-style escapes)."""
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'")
            .replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t"))


def _text_attr_value(attr_type, value):
    def scalar(t, v):
        if t == "bool":
            return "b: " + ("true" if v else "false")
        if t == "int":
            return f"i: {v}"
        if t == "float":
            return f"f: {v}"
        if t == "string":
            return f's: "{_c_escape(v)}"'
        if t == "type":
            return f"type: {v.datatype_name}"
        if t == "shape":
            if v is None:
                return "shape { unknown_rank: true }"
            return "shape { " + " ".join(f"dim {{ size: {-1 if d is None else d} }}" for d in v) + " }"
        return f"{t}: {v!r}"
    if attr_type.startswith("list("):
        inner = attr_type[5:-1]
        if not value:
            return ["list {", "}"]
        return ["list {"] + ["  " + scalar(inner, v) for v in value] + ["}"]
    return [scalar(attr_type, value)]


# --------------------------------------------------------------------------
# Parsing of attr and argument specs.

def _parse_type_list(text, spec):
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise ValueError(f"Attr spec {spec!r}: empty set of allowed values.")
    # {'a', 'b'} is a string enum, {int32, float} a type enum.
    if all(n[0] in "'\"" for n in names):
        return "string", [n.strip("'\"") for n in names]
    out = []
    for n in names:
        if n[0] in "'\"":
            raise ValueError(f"Attr spec {spec!r}: cannot mix strings and types in {{...}}.")
        try:
            out.append(dtypes.as_dtype(n))
        except TypeError:
            raise ValueError(f"Attr spec {spec!r}: unknown type {n!r} in allowed-values set.") from None
    return "type", out


def parse_attr_spec(spec):
    """Parses ``"name: type[ >= N][ = default]"`` into an AttrDef, as OpDefBuilder does."""
    m = re.fullmatch(rf"\s*({_NAME_RE})\s*:\s*(.+?)\s*", spec, re.S)
    if not m:
        raise ValueError(f"Attr spec {spec!r} must look like 'name: type' or 'name: type = default'.")
    name, rest = m.group(1), m.group(2)
    default_text = None
    # The default follows the first '=' that is not part of '>='.
    dm = re.search(r"(?<![>])=(?!=)", rest)
    if dm:
        default_text = rest[dm.end():].strip(" \t")
        rest = rest[:dm.start()].strip()
        if not default_text:
            raise ValueError(f"Attr spec {spec!r}: '=' must be followed by a default value.")
    minimum = None
    mm = re.fullmatch(r"(.+?)\s*>=\s*(-?\d+)", rest, re.S)
    if mm:
        rest, minimum = mm.group(1).strip(), int(mm.group(2))
    allowed = None
    is_list = False
    lm = re.fullmatch(r"list\s*\(\s*(.+?)\s*\)", rest)
    if lm:
        is_list, rest = True, lm.group(1)
    if rest.startswith("{"):
        if not rest.endswith("}"):
            raise ValueError(f"Attr spec {spec!r}: unterminated '{{' in allowed-values set.")
        base, allowed = _parse_type_list(rest[1:-1], spec)
    elif rest in _TYPE_GROUPS:
        base = "type"
        group = _TYPE_GROUPS[rest]
        allowed = None if group is None else [dtypes.as_dtype(t) for t in group]
    elif rest in _SCALAR_ATTR_TYPES:
        base = rest
    else:
        raise ValueError(f"Attr spec {spec!r}: unknown attr type {rest!r}; expected one of "
                         f"{', '.join(_SCALAR_ATTR_TYPES)}, list(...), a type group or a {{...}} set.")
    attr_type = f"list({base})" if is_list else base
    if minimum is not None and not (is_list or base == "int"):
        raise ValueError(f"Attr spec {spec!r}: '>=' is only allowed for int and list attrs.")
    attr = AttrDef(name, attr_type, allowed_values=allowed, minimum=minimum)
    if default_text is not None:
        attr.default_value = validate_attr_value(attr, _parse_default(default_text, attr_type, spec),
                                                 op_name=None)
        attr.has_default = True
    return attr


def _parse_default(text, attr_type, spec):
    def scalar(t, s):
        s = s.strip()
        try:
            if t == "bool":
                if s not in ("true", "false", "True", "False"):
                    raise ValueError
                return s.lower() == "true"
            if t == "int":
                return int(s)
            if t == "float":
                return float(s)
            if t == "string":
                if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
                    return s[1:-1]
                raise ValueError
            if t == "type":
                return dtypes.as_dtype(s)
            if t == "shape":
                if s in ("None", "?", "<unknown>"):
                    return None
                inner = s.strip("[]() ")
                return [None if d.strip() in ("-1", "?", "None") else int(d) for d in inner.split(",") if d.strip()]
        except (ValueError, TypeError):
            pass
        raise ValueError(f"Attr spec {spec!r}: cannot parse default {s!r} as {t}.")
    if attr_type.startswith("list("):
        inner = attr_type[5:-1]
        text = text.strip()
        if not (text.startswith("[") and text.endswith("]")):
            raise ValueError(f"Attr spec {spec!r}: a list default must be written [a, b, ...].")
        body = text[1:-1].strip()
        return [] if not body else [scalar(inner, p) for p in body.split(",")]
    return scalar(attr_type, text)


def validate_attr_value(attr, value, op_name):
    """Checks (and normalises) a value for an attr; raises ValueError/TypeError naming the op."""
    where = f"attr '{attr.name}'" + (f" of op '{op_name}'" if op_name else "")
    t = attr.type

    def one(base, v):
        if base == "type":
            try:
                return dtypes.as_dtype(v)
            except TypeError:
                raise TypeError(f"Value for {where} must be a dtype, got {v!r}.") from None
        if base == "bool":
            if not isinstance(v, (bool,)) and type(v).__name__ != "bool_":
                raise TypeError(f"Value for {where} must be a bool, got {v!r}.")
            return bool(v)
        if base == "int":
            if isinstance(v, bool) or not hasattr(v, "__index__"):
                raise TypeError(f"Value for {where} must be an int, got {v!r}.")
            return int(v)
        if base == "float":
            if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
                raise TypeError(f"Value for {where} must be a float, got {v!r}.")
            return float(v)
        if base == "string":
            if isinstance(v, bytes):
                v = v.decode()
            if not isinstance(v, str):
                raise TypeError(f"Value for {where} must be a string, got {v!r}.")
            return v
        if base == "shape":
            if v is None:
                return None
            from .tensor_shape import as_shape
            s = as_shape(v)
            return s.dims
        return v  # tensor, func: taken as given

    if t.startswith("list("):
        base = t[5:-1]
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"Value for {where} must be a list of {base}, got {value!r}.")
        value = [one(base, v) for v in value]
        if attr.minimum is not None and len(value) < attr.minimum:
            raise ValueError(f"Value for {where} must have at least {attr.minimum} elements, got {len(value)}.")
        items = value
    else:
        value = one(t, value)
        if attr.minimum is not None and value < attr.minimum:
            raise ValueError(f"Value for {where} must be at least minimum {attr.minimum}, got {value}.")
        items = [value]
    if attr.allowed_values is not None:
        for v in items:
            if v not in attr.allowed_values:
                allowed = ", ".join(a.name if isinstance(a, dtypes.DType) else repr(a)
                                    for a in attr.allowed_values)
                shown = v.name if isinstance(v, dtypes.DType) else repr(v)
                raise TypeError(f"Value {shown} passed to {where} is not in the list of allowed values: {allowed}.")
    return value


def parse_arg_spec(spec, attrs_so_far, is_output):
    """Parses ``"name: T"``, ``"name: float"``, ``"name: N * T"``, ``"name: Ref(T)"``."""
    kind = "Output" if is_output else "Input"
    m = re.fullmatch(rf"\s*({_NAME_RE})\s*:\s*(.+?)\s*", spec)
    if not m:
        raise ValueError(f"{kind} spec {spec!r} must look like 'name: type'.")
    name, rest = m.group(1), m.group(2)
    is_ref = False
    rm = re.fullmatch(r"Ref\s*\(\s*(.+?)\s*\)", rest)
    if rm:
        is_ref, rest = True, rm.group(1)
    nm = re.fullmatch(rf"({_NAME_RE})\s*\*\s*({_NAME_RE})", rest)
    if nm:
        number_attr, elem = nm.group(1), nm.group(2)
        arg = ArgDef(name, number_attr=number_attr, is_ref=is_ref)
        try:
            arg.type = dtypes.as_dtype(elem)
        except TypeError:
            arg.type_attr = elem
        return arg
    try:
        return ArgDef(name, type=dtypes.as_dtype(rest), is_ref=is_ref)
    except TypeError:
        pass
    if not re.fullmatch(_NAME_RE, rest):
        raise ValueError(f"{kind} spec {spec!r}: {rest!r} is neither a type nor an attr name.")
    a = attrs_so_far.get(rest)
    if a is not None and a.type == "list(type)":
        return ArgDef(name, type_list_attr=rest, is_ref=is_ref)
    return ArgDef(name, type_attr=rest, is_ref=is_ref)


# --------------------------------------------------------------------------
# The builder and the registry.


class OpDefBuilder:
    """Chained builder returned by ``register_op``; every call updates the registered OpDef.

    Inputs and outputs may name attrs declared later in the chain (as in TF),
    so argument specs are resolved against the attrs when the OpDef is read.
    """

    def __init__(self, name, location):
        if not re.fullmatch(r"_?[A-Z][A-Za-z0-9_]*", name):  # a leading _ marks an internal op, as TF's
            raise ValueError(f"Op name {name!r} must be CamelCase (start with a capital letter).")
        self._op_def = OpDef(name)
        self._op_def.registered_at = location
        self._input_specs = []
        self._output_specs = []
        self._attrs = {}

    @property
    def op_def(self):
        return self._op_def

    def attr(self, spec):
        a = parse_attr_spec(spec)
        if a.name in self._attrs:
            raise ValueError(f"Op '{self._op_def.name}': attr '{a.name}' declared twice.")
        self._attrs[a.name] = a
        self._op_def.attr.append(a)
        self._resolve()
        return self

    def input(self, spec):
        self._input_specs.append(spec)
        self._resolve()
        return self

    def output(self, spec):
        self._output_specs.append(spec)
        self._resolve()
        return self

    def set_shape_fn(self, fn):
        self._op_def.shape_fn = fn
        return self

    def set_is_stateful(self, stateful=True):
        self._op_def.is_stateful = bool(stateful)
        return self

    def doc(self, text):
        self._op_def.summary = text
        return self

    def _resolve(self):
        """Re-derives argument defs; attrs named by args but not declared are implied (TF does the
        same check at finalize)."""
        od = self._op_def
        od.input_arg = [parse_arg_spec(s, self._attrs, False) for s in self._input_specs]
        od.output_arg = [parse_arg_spec(s, self._attrs, True) for s in self._output_specs]
        names = [a.name for a in od.input_arg + od.output_arg]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"Op '{od.name}': argument name(s) {sorted(dup)} used twice.")

    def check_complete(self):
        """Every attr an argument refers to must be declared (TF's OpDef validation)."""
        od = self._op_def
        for arg in od.input_arg + od.output_arg:
            for ref, want in ((arg.type_attr, ("type",)), (arg.number_attr, ("int",)),
                              (arg.type_list_attr, ("list(type)",))):
                if ref is None:
                    continue
                a = self._attrs.get(ref)
                if a is None:
                    raise ValueError(f"Op '{od.name}': argument '{arg.name}' refers to attr '{ref}', "
                                     f"which is not declared with .attr().")
                if a.type not in want:
                    raise ValueError(f"Op '{od.name}': attr '{ref}' used by argument '{arg.name}' "
                                     f"must have type {want[0]}, not {a.type}.")


class OpDefRegistry:
    """All registered ops by name (``aics.op_def_registry``)."""

    def __init__(self):
        self._builders = {}
        self.on_change = []  # callbacks(op_type), as KernelRegistry.on_change

    def register(self, name, location):
        if name in self._builders:
            prev = self._builders[name].op_def.registered_at
            raise KeyError(f"Op type '{name}' is already registered at {prev[0]}:{prev[1]}.")
        b = OpDefBuilder(name, location)
        self._builders[name] = b
        for cb in self.on_change:
            cb(name)
        return b

    def get(self, name):
        """The OpDef for ``name``, or None when no such op is registered (as TF's op_def_registry.get)."""
        b = self._builders.get(name)
        if b is None:
            return None
        b.check_complete()
        return b.op_def

    def lookup(self, name):
        """Like ``get`` but raises NotFoundError listing what is registered."""
        od = self.get(name)
        if od is None:
            raise NotFoundError(None, None, f"Op type not registered '{name}'. "
                                f"{len(self._builders)} op types are registered; "
                                f"see aics.op_def_registry.list_ops().")
        return od

    def list_ops(self):
        return sorted(self._builders)

    def __contains__(self, name):
        return name in self._builders

    def unregister(self, name):
        """Removes an op (used by tests and notebooks that re-run a registration cell)."""
        self._builders.pop(name, None)
        for cb in self.on_change:
            cb(name)

    def snapshot(self):
        """What is registered now, for ``restore`` (``aics.experimental.registration_scope``)."""
        return dict(self._builders)

    def restore(self, snapshot):
        """Puts back the registrations ``snapshot()`` returned; the changed op types are announced."""
        changed = {n for n in set(snapshot) | set(self._builders) if snapshot.get(n) is not self._builders.get(n)}
        self._builders.clear()
        self._builders.update(snapshot)
        for name in sorted(changed):
            for cb in self.on_change:
                cb(name)


op_def_registry = OpDefRegistry()


def register_op(name):
    """Starts the definition of op type ``name`` (TF's ``REGISTER_OP``); returns the builder.

    The op records the line that called ``register_op``, so that line should name the op."""
    return op_def_registry.register(name, caller_location())
