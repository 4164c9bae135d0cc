"""`grpcurl describe`: an element of a served .proto file, printed as proto source
with the comments the server's descriptors carry (source_code_info)."""

from google.protobuf import descriptor_pb2

# Field numbers inside FileDescriptorProto / DescriptorProto / ... used in
# source_code_info paths.
FILE_MESSAGE, FILE_ENUM, FILE_SERVICE = 4, 5, 6
MESSAGE_FIELD, MESSAGE_NESTED, MESSAGE_ENUM, MESSAGE_ONEOF = 2, 3, 4, 8
ENUM_VALUE, SERVICE_METHOD = 2, 2

F = descriptor_pb2.FieldDescriptorProto
SCALARS = {v: k[len("TYPE_"):].lower() for k, v in F.Type.items()}
LABELS = {F.LABEL_REPEATED: "repeated "}


def elements(file):
    """(full name, kind, proto, source path) of everything named in `file`."""
    prefix = file.package + "." if file.package else ""

    def walk_message(message, name, path):
        yield name, "message", message, path
        for i, field in enumerate(message.field):
            yield f"{name}.{field.name}", "field", field, path + [MESSAGE_FIELD, i]
        for i, nested in enumerate(message.nested_type):
            yield from walk_message(nested, f"{name}.{nested.name}", path + [MESSAGE_NESTED, i])
        for i, enum in enumerate(message.enum_type):
            yield from walk_enum(enum, f"{name}.{enum.name}", path + [MESSAGE_ENUM, i])

    def walk_enum(enum, name, path):
        yield name, "enum", enum, path
        for i, value in enumerate(enum.value):
            yield f"{name}.{value.name}", "enum value", value, path + [ENUM_VALUE, i]

    for i, message in enumerate(file.message_type):
        yield from walk_message(message, prefix + message.name, [FILE_MESSAGE, i])
    for i, enum in enumerate(file.enum_type):
        yield from walk_enum(enum, prefix + enum.name, [FILE_ENUM, i])
    for i, service in enumerate(file.service):
        name = prefix + service.name
        yield name, "service", service, [FILE_SERVICE, i]
        for j, method in enumerate(service.method):
            yield f"{name}.{method.name}", "method", method, [FILE_SERVICE, i, SERVICE_METHOD, j]


def comments(file):
    """Source path (tuple) -> leading comment text, for one file."""
    return {tuple(loc.path): loc.leading_comments
            for loc in file.source_code_info.location if loc.leading_comments.strip()}


def _comment_lines(text, indent):
    return [f"{indent}//{line}".rstrip() for line in text.rstrip("\n").split("\n")]


def _type_name(field):
    if field.type in (F.TYPE_MESSAGE, F.TYPE_ENUM):
        return field.type_name
    return SCALARS[field.type]


def _render_message(message, path, notes, indent):
    lines = [f"{indent}message {message.name} {{"]
    inner = indent + "  "
    oneofs = {}
    for i, field in enumerate(message.field):
        if field.HasField("oneof_index") and not field.proto3_optional:
            oneofs.setdefault(field.oneof_index, []).append((i, field))
    emitted = set()
    for i, field in enumerate(message.field):
        if field.HasField("oneof_index") and not field.proto3_optional:
            if field.oneof_index in emitted:
                continue
            emitted.add(field.oneof_index)
            lines += _with_comment(
                notes, path + [MESSAGE_ONEOF, field.oneof_index], inner,
                [f"{inner}oneof {message.oneof_decl[field.oneof_index].name} {{"])
            for j, member in oneofs[field.oneof_index]:
                lines += _render_field(member, path + [MESSAGE_FIELD, j], notes, inner + "  ")
            lines.append(f"{inner}}}")
        else:
            lines += _render_field(field, path + [MESSAGE_FIELD, i], notes, inner)
    for i, nested in enumerate(message.nested_type):
        lines += _with_comment(notes, path + [MESSAGE_NESTED, i], inner,
                               _render_message(nested, path + [MESSAGE_NESTED, i], notes, inner))
    for i, enum in enumerate(message.enum_type):
        lines += _with_comment(notes, path + [MESSAGE_ENUM, i], inner,
                               _render_enum(enum, path + [MESSAGE_ENUM, i], notes, inner))
    lines.append(f"{indent}}}")
    return lines


def _render_field(field, path, notes, indent):
    line = f"{indent}{LABELS.get(field.label, '')}{_type_name(field)} {field.name} = {field.number};"
    return _with_comment(notes, path, indent, [line])


def _render_enum(enum, path, notes, indent):
    lines = [f"{indent}enum {enum.name} {{"]
    for i, value in enumerate(enum.value):
        lines += _with_comment(notes, path + [ENUM_VALUE, i], indent + "  ",
                               [f"{indent}  {value.name} = {value.number};"])
    return lines + [f"{indent}}}"]


def _rpc_line(method, indent):
    take = "stream " if method.client_streaming else ""
    give = "stream " if method.server_streaming else ""
    return (f"{indent}rpc {method.name} ( {take}{method.input_type} ) "
            f"returns ( {give}{method.output_type} );")


def _with_comment(notes, path, indent, lines):
    note = notes.get(tuple(path))
    return (_comment_lines(note, indent) if note else []) + lines


def describe(file, symbol):
    """The text grpcurl prints for `describe SYMBOL`, or None if `file` lacks it."""
    notes = comments(file)
    for name, kind, proto, path in elements(file):
        if name != symbol:
            continue
        if kind == "service":
            body = [f"service {proto.name} {{"]
            for j, method in enumerate(proto.method):
                body += _with_comment(notes, path + [SERVICE_METHOD, j], "  ",
                                      [_rpc_line(method, "  ")])
            body.append("}")
        elif kind == "method":
            body = [_rpc_line(proto, "")]
        elif kind == "message":
            body = _render_message(proto, path, notes, "")
        elif kind == "enum":
            body = _render_enum(proto, path, notes, "")
        elif kind == "field":
            body = _render_field(proto, path, {}, "")
        else:
            body = [f"{proto.name} = {proto.number};"]
        article = "an" if kind[0] in "aeiou" else "a"
        return "\n".join([f"{symbol} is {article} {kind}:"] + _with_comment(notes, path, "", body)) + "\n"
    return None
