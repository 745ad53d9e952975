/*
 * tl_json.h - strict JSON reading on top of cJSON, with errors naming file and field.
 *
 * Strictness added over cJSON: no NUL bytes, no trailing garbage (cJSON_ParseWithOpts
 * with require_null_terminated), no duplicate keys in any object (cJSON keeps them, so
 * every object's children are walked). Field paths read like "files[3].sha256".
 */
#ifndef TL_JSON_H
#define TL_JSON_H
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* Parse buf[0..len) (name is used in messages). 0 ok (*out owned by caller), 1 error. */
int tl_json_parse(const char *name, const char *buf, size_t len, cJSON **out);
/* Read and parse a file. 0 ok, 1 error (reported). */
int tl_json_load(const char *path, cJSON **out);
/* Write a JSON document (formatted, trailing newline) atomically. 0 ok, 1 error. */
int tl_json_save(const char *path, const cJSON *doc);

/* Typed field getters. `at` is the path of obj ("" for the root); errors are reported as
 * "file: at.key: reason" and the getter returns NULL / nonzero. */
const cJSON *tl_json_field(const char *file, const cJSON *obj, const char *at, const char *key, int type_mask,
                           const char *type_name);
const char *tl_json_str(const char *file, const cJSON *obj, const char *at, const char *key);
int tl_json_u64(const char *file, const cJSON *obj, const char *at, const char *key, uint64_t *out);
int tl_json_bool(const char *file, const cJSON *obj, const char *at, const char *key, int *out);
/* A string that must be 64 lowercase hex digits. */
const char *tl_json_sha(const char *file, const cJSON *obj, const char *at, const char *key);
/* "at.key" or "key" into buf. */
const char *tl_json_at(char *buf, size_t len, const char *at, const char *key);

#endif
