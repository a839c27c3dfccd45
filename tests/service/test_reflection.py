"""gRPC server reflection: a stock grpcio reflection client, handed nothing
but heapd's socket, lists heapd's services and calls them through
descriptors it fetched from heapd (no .proto, no generated code)."""

import grpc
import pytest
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase)

from conftest import Daemon, built, clean_env


@pytest.fixture
def heapd(tmp_dir, daemons):
    sock = tmp_dir / "heapd.sock"
    d = Daemon([built("heapd"), "--heap", tmp_dir / "heap", "--create", "--size", "64M",
                "--durability", "memory", "--name", "reflected", "--socket", sock],
               sock, tmp_dir / "heapd.log", env=clean_env())
    daemons.append(d.start())
    return d


def call(ch, pool, rpc, **fields):
    """Call rpc ("package.Service/Method") with a request built from fields,
    every type taken from the descriptors heapd sent; (response, method
    descriptor)."""
    service, method = rpc.split("/")
    m = pool.FindServiceByName(service).FindMethodByName(method)
    req_cls = message_factory.GetMessageClass(m.input_type)
    resp_cls = message_factory.GetMessageClass(m.output_type)
    stub = ch.unary_unary(f"/{service}/{method}", request_serializer=req_cls.SerializeToString,
                          response_deserializer=resp_cls.FromString)
    return stub(req_cls(**fields), timeout=10), m


def enum_name(m, field, number):
    return m.output_type.fields_by_name[field].enum_type.values_by_number[number].name


def test_list_and_call_by_reflection(heapd, tmp_dir):
    with grpc.insecure_channel(f"unix:{heapd.sock}") as ch:
        db = ProtoReflectionDescriptorDatabase(ch)
        services = set(db.get_services())
        assert {"uniheap.v1.Heapd", "grpc.health.v1.Health"} <= services, services
        pool = descriptor_pool.DescriptorPool(db)

        resp, m = call(ch, pool, "uniheap.v1.Heapd/Status")
        assert resp.heap_name == "reflected"
        assert resp.heap_path == str(tmp_dir / "heap")
        assert resp.pid == heapd.proc.pid          # setpriv execs heapd: same pid
        assert enum_name(m, "durability", resp.durability) == "DURABILITY_MEMORY"

        for name in ("", "uniheap.v1.Heapd"):
            resp, m = call(ch, pool, "grpc.health.v1.Health/Check", service=name)
            assert enum_name(m, "status", resp.status) == "SERVING"
    assert heapd.stop() == 0


def test_unknown_symbol_is_a_clean_error(heapd):
    """A reflection request for something heapd does not serve fails that
    request alone; heapd keeps serving."""
    with grpc.insecure_channel(f"unix:{heapd.sock}") as ch:
        db = ProtoReflectionDescriptorDatabase(ch)
        with pytest.raises(KeyError):
            db.FindFileContainingSymbol("no.such.Service")
        assert "uniheap.v1.Heapd" in db.get_services()
    assert heapd.stop() == 0
