/* A small helper for modhost mods in C: the SPT envelope, db references, routes and errors, over the
 * bindings wit-bindgen generated from wit/ (bindings/plugin.h).
 *
 * Everything a mod returns to the host is freed by the generated post-return code with free(), so every
 * string and list here is malloc'd: never return a pointer to a literal. */
#ifndef MODHOST_H
#define MODHOST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindings/plugin.h"

/* A malloc'd copy of `len` bytes, as a byte list. */
static inline plugin_list_u8_t mh_bytes(const char *data, size_t len) {
  plugin_list_u8_t out = {.ptr = malloc(len ? len : 1), .len = len};
  memcpy(out.ptr, data, len);
  return out;
}

/* Routes: `paths` claimed exactly. */
static inline void mh_routes(plugin_list_route_t *ret, const char *const *paths, size_t n) {
  ret->ptr = malloc(n * sizeof(plugin_route_t));
  ret->len = n;
  for (size_t i = 0; i < n; i++) {
    plugin_string_dup(&ret->ptr[i].path, paths[i]);
    ret->ptr[i].kind = MODHOST_PLUGIN_TYPES_MATCH_KIND_EXACT;
  }
}

/* A response of `parts` chunks, all JSON. */
static inline void mh_response(plugin_response_t *ret, size_t parts) {
  ret->status = 200;
  ret->headers.ptr = malloc(sizeof(plugin_tuple2_string_string_t));
  ret->headers.len = 1;
  plugin_string_dup(&ret->headers.ptr[0].f0, "content-type");
  plugin_string_dup(&ret->headers.ptr[0].f1, "application/json");
  ret->body.ptr = malloc(parts * sizeof(modhost_plugin_types_chunk_t));
  ret->body.len = parts;
}

static inline void mh_chunk_text(plugin_response_t *ret, size_t i, const char *text) {
  ret->body.ptr[i].tag = MODHOST_PLUGIN_TYPES_CHUNK_BYTES;
  ret->body.ptr[i].val.bytes = mh_bytes(text, strlen(text));
}

/* `{"err":0,"errmsg":null,"data":<data_json>}`; `data_json` must be JSON text. */
static inline void mh_ok(plugin_response_t *ret, const char *data_json) {
  const char *head = "{\"err\":0,\"errmsg\":null,\"data\":";
  size_t len = strlen(head) + strlen(data_json) + 1;
  char *text = malloc(len + 1);
  snprintf(text, len + 1, "%s%s}", head, data_json);
  mh_response(ret, 1);
  ret->body.ptr[0].tag = MODHOST_PLUGIN_TYPES_CHUNK_BYTES;
  ret->body.ptr[0].val.bytes = (plugin_list_u8_t){.ptr = (uint8_t *)text, .len = len};
}

/* `{"err":0,"errmsg":null,"data":<the db value at path>}`, spliced in by the host. */
static inline void mh_ok_db(plugin_response_t *ret, const char *path) {
  mh_response(ret, 3);
  mh_chunk_text(ret, 0, "{\"err\":0,\"errmsg\":null,\"data\":");
  ret->body.ptr[1].tag = MODHOST_PLUGIN_TYPES_CHUNK_DB;
  plugin_string_dup(&ret->body.ptr[1].val.db, path);
  mh_chunk_text(ret, 2, "}");
}

/* `{"err":<code>,"errmsg":"<message>","data":null}`; `message` must need no JSON escaping. */
static inline void mh_refuse(plugin_response_t *ret, int code, const char *message) {
  char text[512];
  snprintf(text, sizeof text, "{\"err\":%d,\"errmsg\":\"%s\",\"data\":null}", code ? code : 1, message);
  mh_response(ret, 1);
  mh_chunk_text(ret, 0, text);
}

/* Fails the call with WIT error `tag` (MODHOST_PLUGIN_TYPES_ERROR_*); answers false for `handle`. */
static inline bool mh_fail(plugin_error_t *err, uint8_t tag, const char *message, size_t len) {
  err->tag = tag;
  plugin_string_dup_n(&err->val.failed, message, len); /* every variant holds a string */
  return false;
}

#endif
