/*
 * server_calls.cc -- the class and arena RPCs. Every input is checked
 * here before the core sees it; the core checks again what only it can
 * (identifier syntax, duplicate fields, lease ownership).
 */
#include <string.h>

#include <vector>

#include "server_service.h"

namespace pb = uniheap::v1;

namespace heapd {

uint64_t Service::heap_size()
{
	return uh_hdr_cur_size(hd_header(hd_));
}

grpc::Status Service::check_ref(const pb::SessionRef &ref, bool present)
{
	if (!present)
		return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
				    "missing session: pass the session and token from Welcome");
	char err[kErrLen] = "";
	int rc = hd_session_check(hd_, ref.session(), ref.token(), err, sizeof(err));
	return rc ? uh_to_status(rc, err) : grpc::Status::OK;
}

/* ---------------------------------------------------------------- classes */

namespace {

grpc::Status field_check(const pb::FieldSpec &f, int i)
{
	std::string why;
	std::string what = "field " + std::to_string(i) + " name";
	if (!name_ok(f.name(), UH_FIELD_NAME_MAX, what.c_str(), &why))
		return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why);
	int t = f.type();
	if (t < (int)UH_T_BOOL || t > (int)UH_T_FIELD_MAX)
		return status_f(grpc::StatusCode::INVALID_ARGUMENT,
				"field %d (%s): type %d is not a valid FieldType (1..%u)", i,
				f.name().c_str(), t, UH_T_FIELD_MAX);
	if (f.ref_class() >= UH_CLASS_CAP)
		return status_f(grpc::StatusCode::INVALID_ARGUMENT,
				"field %d (%s): ref_class %u out of range (0..%u)", i,
				f.name().c_str(), f.ref_class(), UH_CLASS_CAP - 1);
	if (f.ref_class() != 0 && t != (int)UH_T_REF)
		return status_f(grpc::StatusCode::INVALID_ARGUMENT,
				"field %d (%s): ref_class is only allowed on FIELD_TYPE_REF fields",
				i, f.name().c_str());
	if (f.capacity() != 0 && !uh_type_is_inline((uint32_t)t))
		return status_f(grpc::StatusCode::INVALID_ARGUMENT,
				"field %d (%s): capacity is only allowed on FIELD_TYPE_INLINE_* fields",
				i, f.name().c_str());
	return grpc::Status::OK;
}

} /* namespace */

grpc::Status Service::RegisterClass(grpc::ServerContext *ctx, const pb::RegisterClassRequest *req,
				    pb::RegisterClassResponse *resp)
{
	return guard("RegisterClass", [&] {
		grpc::Status s = check_ref(req->session(), req->has_session());
		if (!s.ok())
			return s;
		std::string why;
		if (!name_ok(req->name(), UH_NAME_MAX, "class name", &why))
			return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why);
		if (req->fields_size() > (int)UH_FIELDS_MAX)
			return status_f(grpc::StatusCode::INVALID_ARGUMENT,
					"class %s has %d fields, at most %u allowed",
					req->name().c_str(), req->fields_size(), UH_FIELDS_MAX);
		std::vector<uh_field_spec> fields(req->fields_size());
		for (int i = 0; i < req->fields_size(); i++) {
			const pb::FieldSpec &f = req->fields(i);
			s = field_check(f, i);
			if (!s.ok())
				return grpc::Status(s.error_code(), "class " + req->name() + ": " +
									    s.error_message());
			/* Names have no NUL (checked), so c_str() is the whole name. */
			fields[i].name = f.name().c_str();
			fields[i].type = (uint32_t)f.type();
			/* One word, by type (uh_field_spec); the capacity is
			 * checked by hd_class_register. */
			fields[i].ref_class = uh_type_is_inline(fields[i].type) ? f.capacity() :
										   f.ref_class();
		}
		uint32_t id = 0;
		int created = 0;
		char err[kErrLen] = "";
		int rc = hd_class_register(hd_, req->name().c_str(), fields.data(),
					   (uint32_t)fields.size(), &id, &created, err, sizeof(err));
		if (rc)
			return uh_to_status(rc, err);
		resp->set_class_id(id);
		resp->set_created(created != 0);
		return grpc::Status::OK;
	});
}

/* ClassInfo of id from its descriptor, bounds-checked against the heap
 * (descriptors live in the shared mapping). false if id is unused or its
 * descriptor is damaged. */
bool Service::class_info(uint32_t id, pb::ClassInfo *ci)
{
	const struct uh_class_desc *d = hd_class_get(hd_, id);
	if (!d)
		return false;
	uint64_t size = heap_size();
	uint64_t off = (uint64_t)((const char *)d - hd_base(hd_));
	if (off > size || size - off < sizeof(*d))
		return false;
	uint32_t nfields = d->nfields;
	if (nfields > UH_FIELDS_MAX ||
	    size - off - sizeof(*d) < (uint64_t)nfields * sizeof(struct uh_field_desc))
		return false;
	ci->set_class_id(id);
	ci->set_name(utf8_clean(d->name, strnlen(d->name, sizeof(d->name))));
	ci->set_kind(static_cast<pb::ClassKind>(d->kind));
	ci->set_payload_size(d->payload_size);
	ci->set_descriptor_off(hd_class_desc_off(hd_, id));
	for (uint32_t i = 0; i < nfields; i++) {
		const struct uh_field_desc *f = &d->fields[i];
		pb::FieldInfo *fi = ci->add_fields();
		fi->set_name(utf8_clean(f->name, strnlen(f->name, sizeof(f->name))));
		fi->set_type(static_cast<pb::FieldType>(f->type));
		fi->set_offset(f->offset);
		fi->set_ref_class(f->ref_class);
		fi->set_capacity(uh_type_is_inline(f->type) ? f->capacity : 0);
	}
	return true;
}

grpc::Status Service::GetClass(grpc::ServerContext *ctx, const pb::GetClassRequest *req,
			       pb::ClassInfo *resp)
{
	return guard("GetClass", [&] {
		uint32_t id;
		switch (req->key_case()) {
		case pb::GetClassRequest::kClassId:
			id = req->class_id();
			if (id == 0 || id >= UH_CLASS_CAP)
				return status_f(grpc::StatusCode::INVALID_ARGUMENT,
						"class id %u out of range (1..%u)", id,
						UH_CLASS_CAP - 1);
			break;
		case pb::GetClassRequest::kName: {
			std::string why;
			if (!name_ok(req->name(), UH_NAME_MAX, "class name", &why))
				return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why);
			if (hd_class_find(hd_, req->name().c_str(), &id) != 0)
				return grpc::Status(grpc::StatusCode::NOT_FOUND,
						    "no class named " + req->name());
			break;
		}
		default:
			return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
					    "GetClass needs a class_id or a name");
		}
		if (!class_info(id, resp))
			return status_f(grpc::StatusCode::NOT_FOUND, "no class with id %u", id);
		return grpc::Status::OK;
	});
}

grpc::Status Service::ListClasses(grpc::ServerContext *ctx, const pb::ListClassesRequest *req,
				  pb::ListClassesResponse *resp)
{
	return guard("ListClasses", [&] {
		uint32_t last = hd_header(hd_)->class_count;
		if (last >= UH_CLASS_CAP)
			last = UH_CLASS_CAP - 1;
		for (uint32_t id = 1; id <= last; id++) {
			pb::ClassInfo ci;
			if (class_info(id, &ci))
				resp->add_classes()->Swap(&ci);
			else if (hd_class_get(hd_, id))
				hd_log("warn", "class_damaged", "class_id=%u", id);
		}
		return grpc::Status::OK;
	});
}

/* ---------------------------------------------------------------- arenas */

namespace {

bool is_size_class(uint32_t slot_size)
{
	for (uint32_t i = 0; i < UH_SIZE_CLASSES; i++)
		if (uh_size_class_slot[i] == slot_size)
			return true;
	return false;
}

void arena_resp(const struct hd_arena &a, pb::LeaseArenaResponse *resp)
{
	resp->set_arena_off(a.arena_off);
	resp->set_slot_size(a.slot_size);
	resp->set_nslots(a.nslots);
	resp->set_first_slot(a.first_slot);
}

} /* namespace */

grpc::Status Service::LeaseArena(grpc::ServerContext *ctx, const pb::LeaseArenaRequest *req,
				 pb::LeaseArenaResponse *resp)
{
	return guard("LeaseArena", [&] {
		grpc::Status s = check_ref(req->session(), req->has_session());
		if (!s.ok())
			return s;
		if (!is_size_class(req->slot_size()))
			return status_f(grpc::StatusCode::INVALID_ARGUMENT,
					"slot_size %u is not a size class (32, 48, 64, 96, ..., 8192, 16384)",
					req->slot_size());
		struct hd_arena a;
		char err[kErrLen] = "";
		int rc = hd_arena_lease(hd_, req->session().session(), req->slot_size(), &a, err,
					sizeof(err));
		if (rc)
			return uh_to_status(rc, err);
		arena_resp(a, resp);
		return grpc::Status::OK;
	});
}

grpc::Status Service::LeaseLarge(grpc::ServerContext *ctx, const pb::LeaseLargeRequest *req,
				 pb::LeaseArenaResponse *resp)
{
	return guard("LeaseLarge", [&] {
		grpc::Status s = check_ref(req->session(), req->has_session());
		if (!s.ok())
			return s;
		uint64_t size = req->size();
		if (size < UH_OBJHDR_SIZE)
			return status_f(grpc::StatusCode::INVALID_ARGUMENT,
					"large object size %llu is smaller than the %u-byte object header",
					(unsigned long long)size, UH_OBJHDR_SIZE);
		if (size > heap_size())
			return status_f(grpc::StatusCode::INVALID_ARGUMENT,
					"large object size %llu exceeds the heap size %llu",
					(unsigned long long)size, (unsigned long long)heap_size());
		if (size - UH_OBJHDR_SIZE > UH_OBJ_SIZE_MASK)
			return status_f(grpc::StatusCode::INVALID_ARGUMENT,
					"large object size %llu exceeds the largest object (%llu bytes)",
					(unsigned long long)size,
					(unsigned long long)UH_OBJ_SIZE_MASK + UH_OBJHDR_SIZE);
		struct hd_arena a;
		char err[kErrLen] = "";
		int rc = hd_large_lease(hd_, req->session().session(), size, &a, err, sizeof(err));
		if (rc)
			return uh_to_status(rc, err);
		arena_resp(a, resp);
		return grpc::Status::OK;
	});
}

grpc::Status Service::ReturnArena(grpc::ServerContext *ctx, const pb::ReturnArenaRequest *req,
				  pb::ReturnArenaResponse *resp)
{
	return guard("ReturnArena", [&] {
		grpc::Status s = check_ref(req->session(), req->has_session());
		if (!s.ok())
			return s;
		uint64_t off = req->arena_off();
		if (off == 0 || off >= heap_size())
			return status_f(grpc::StatusCode::INVALID_ARGUMENT,
					"arena_off %llu is outside the heap (1..%llu)",
					(unsigned long long)off, (unsigned long long)heap_size() - 1);
		char err[kErrLen] = "";
		int rc = hd_arena_return(hd_, req->session().session(), off, err, sizeof(err));
		return rc ? uh_to_status(rc, err) : grpc::Status::OK;
	});
}

grpc::Status Service::LeaseLogExtent(grpc::ServerContext *ctx,
				     const pb::LeaseLogExtentRequest *req,
				     pb::LeaseLogExtentResponse *resp)
{
	return guard("LeaseLogExtent", [&] {
		grpc::Status s = check_ref(req->session(), req->has_session());
		if (!s.ok())
			return s;
		if (req->size() > heap_size())
			return status_f(grpc::StatusCode::INVALID_ARGUMENT,
					"log extent of %llu bytes exceeds the heap size %llu",
					(unsigned long long)req->size(),
					(unsigned long long)heap_size());
		uint64_t off = 0, got = 0;
		char err[kErrLen] = "";
		int rc = hd_log_extent_lease(hd_, req->session().session(), req->size(), &off,
					     &got, err, sizeof(err));
		if (rc)
			return uh_to_status(rc, err);
		resp->set_extent_off(off);
		resp->set_size(got);
		return grpc::Status::OK;
	});
}

grpc::Status Service::TrimLog(grpc::ServerContext *ctx, const pb::TrimLogRequest *req,
			      pb::TrimLogResponse *resp)
{
	return guard("TrimLog", [&] {
		grpc::Status s = check_ref(req->session(), req->has_session());
		if (!s.ok())
			return s;
		char err[kErrLen] = "";
		int rc = hd_log_trim(hd_, req->session().session(), err, sizeof(err));
		return rc ? uh_to_status(rc, err) : grpc::Status::OK;
	});
}

} /* namespace heapd */
