"""A gRPC client that knows nothing of sealbox in advance, as grpcurl does.

Everything comes from the server's reflection service: the list of services, their
.proto files with comments, and the message types built from those files at run
time (descriptor_pool + message_factory). No stubs are generated for any service
the server offers; only the reflection protocol itself is compiled in (from the
repository's proto/grpc/reflection/v1/reflection.proto), as it is in grpcurl.
"""

import json
import os
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

PROTO_DIR = os.environ.get("SEALBOX_PROTO_DIR", "proto")
REFLECTION_PROTO = "grpc/reflection/v1/reflection.proto"


def _reflection_messages(version):
    """(request class, response class) of the reflection protocol `version` ("v1" or
    "v1alpha"), built from reflection.proto by protoc into a private pool."""
    from grpc_tools import protoc
    out = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")), "reflection.desc")
    if protoc.main(["protoc", f"-I{PROTO_DIR}", f"--descriptor_set_out={out}",
                    os.path.join(PROTO_DIR, REFLECTION_PROTO)]) != 0:
        raise RuntimeError("protoc failed on " + REFLECTION_PROTO)
    files = descriptor_pb2.FileDescriptorSet()
    with open(out, "rb") as f:
        files.ParseFromString(f.read())
    file = files.file[0]
    if version != "v1":  # v1alpha: the same protocol under its older package name
        file.package = "grpc.reflection." + version
        del file.service[:]  # only its messages are needed here
        for message in file.message_type:
            for field in (f for f in message.field if f.type_name):
                field.type_name = field.type_name.replace(".v1.", f".{version}.")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    factory = message_factory.MessageFactory(pool)
    return tuple(factory.GetPrototype(pool.FindMessageTypeByName(
        f"grpc.reflection.{version}.{name}"))
        for name in ("ServerReflectionRequest", "ServerReflectionResponse"))


# grpcurl's names of the status codes (Go's), by number: it prints them after "Code:"
# and exits with 64 plus the number.
GRPCURL_CODE_NAMES = {
    0: "OK", 1: "Canceled", 2: "Unknown", 3: "InvalidArgument", 4: "DeadlineExceeded",
    5: "NotFound", 6: "AlreadyExists", 7: "PermissionDenied", 8: "ResourceExhausted",
    9: "FailedPrecondition", 10: "Aborted", 11: "OutOfRange", 12: "Unimplemented",
    13: "Internal", 14: "Unavailable", 15: "DataLoss", 16: "Unauthenticated",
}


class ReflectionError(Exception):
    """The server's reflection answered with an error (code, message)."""

    def __init__(self, code, message):
        super().__init__(f"reflection error {code}: {message}")
        self.code, self.message = code, message


class ReflectionClient:
    """Learns a server's API through reflection and calls it with JSON."""

    def __init__(self, channel, version="v1", metadata=()):
        self.channel = channel
        self.version = version
        self.metadata = list(metadata)
        self.request_class, self.response_class = _reflection_messages(version)
        self.pool = descriptor_pool.DescriptorPool()
        self.files = {}  # name -> FileDescriptorProto, as served
        self.added = set()  # names of the files already in the pool
        self.factory = message_factory.MessageFactory(self.pool)

    def _ask(self, **question):
        call = self.channel.stream_stream(
            f"/grpc.reflection.{self.version}.ServerReflection/ServerReflectionInfo",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=self.response_class.FromString)
        (answer,) = list(call(iter([self.request_class(**question)]),
                              metadata=self.metadata, timeout=30))
        if answer.HasField("error_response"):
            raise ReflectionError(answer.error_response.error_code,
                                  answer.error_response.error_message)
        return answer

    def list_services(self):
        answer = self._ask(list_services="")
        return [s.name for s in answer.list_services_response.service]

    def _add_files(self, answer):
        """Adds the served files to the pool, each after the files it imports."""
        for raw in answer.file_descriptor_response.file_descriptor_proto:
            file = descriptor_pb2.FileDescriptorProto.FromString(raw)
            self.files.setdefault(file.name, file)
        pending = [f for name, f in self.files.items() if name not in self.added]
        while pending:
            ready = [f for f in pending if all(d in self.added for d in f.dependency)]
            if not ready:
                missing = {d for f in pending for d in f.dependency if d not in self.files}
                raise ReflectionError(5, f"imports never served: {sorted(missing)}")
            for file in ready:
                self.pool.Add(file)
                self.added.add(file.name)
            pending = [f for f in pending if f.name not in self.added]

    def resolve_symbol(self, symbol):
        """The file defining `symbol` (with its imports) into the pool; its name."""
        answer = self._ask(file_containing_symbol=symbol)
        self._add_files(answer)
        return descriptor_pb2.FileDescriptorProto.FromString(
            answer.file_descriptor_response.file_descriptor_proto[0]).name

    def resolve_file(self, name):
        self._add_files(self._ask(file_by_filename=name))

    def service(self, name):
        self.resolve_symbol(name)
        return self.pool.FindServiceByName(name)

    def method(self, full_method):
        """'pkg.Service/Method' or 'pkg.Service.Method' -> MethodDescriptor."""
        service, _, method = full_method.replace("/", ".").rpartition(".")
        return self.service(service).FindMethodByName(method)

    def message_class(self, descriptor):
        return self.factory.GetPrototype(descriptor)

    def call(self, full_method, requests, metadata=(), timeout=60):
        """Calls a method with request messages given as dicts (JSON field names);
        returns the responses as messages (a list, even for unary calls)."""
        method = self.method(full_method)
        request_class = self.message_class(method.input_type)
        response_class = self.message_class(method.output_type)
        messages = [json_format.ParseDict(r, request_class()) for r in requests]
        path = f"/{method.containing_service.full_name}/{method.name}"
        kwargs = dict(request_serializer=lambda m: m.SerializeToString(),
                      response_deserializer=response_class.FromString)
        streaming_in = method.client_streaming
        streaming_out = method.server_streaming
        metadata = list(metadata)
        if not streaming_in and not messages:
            messages = [request_class()]  # grpcurl sends an empty message without -d
        if not streaming_in and len(messages) != 1:
            raise ValueError(f"{full_method} takes one request message, got {len(messages)}")
        if streaming_in and streaming_out:
            return list(self.channel.stream_stream(path, **kwargs)(
                iter(messages), metadata=metadata, timeout=timeout))
        if streaming_in:
            return [self.channel.stream_unary(path, **kwargs)(
                iter(messages), metadata=metadata, timeout=timeout)]
        if streaming_out:
            return list(self.channel.unary_stream(path, **kwargs)(
                messages[0], metadata=metadata, timeout=timeout))
        return [self.channel.unary_unary(path, **kwargs)(
            messages[0], metadata=metadata, timeout=timeout)]


def to_json(message, emit_defaults=False):
    """A response as grpcurl prints it: lowerCamel names, two-space indent."""
    return json_format.MessageToJson(message, indent=2,
                                     including_default_value_fields=emit_defaults)


def parse_json_stream(text):
    """Request messages given as JSON objects one after another (grpcurl's -d)."""
    decoder = json.JSONDecoder()
    messages, position = [], 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return messages
        message, position = decoder.raw_decode(text, position)
        messages.append(message)
