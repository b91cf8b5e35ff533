/* The hello example in C: the same four routes, the same answers as examples/hello (Rust).
 *
 *   GET  /hello/item    one db value (the rouble's name) in an envelope
 *   POST /hello/visits  a per-session counter in the store, written then read back
 *   GET  /hello/items   the whole item table by db reference (never copied into the mod)
 *   GET  /hello/fail    the SPT error envelope (err 1), without failing the request
 */
#include "modhost.h"

#define ROUBLES "5449016a4bdc2d6f028b456f"

static bool route_is(const plugin_request_t *req, const char *path) {
  return req->route.len == strlen(path) && memcmp(req->route.ptr, path, req->route.len) == 0;
}

void exports_plugin_routes(plugin_list_route_t *ret) {
  static const char *const paths[] = {"/hello/item", "/hello/visits", "/hello/items", "/hello/fail"};
  mh_routes(ret, paths, 4);
}

bool exports_plugin_init(plugin_error_t *err) {
  (void)err;
  return true;
}

/* The store's value under `key` as a number (0 when absent); false on a store error. */
static bool stored_count(plugin_string_t *key, unsigned long long *count, plugin_error_t *err) {
  plugin_option_list_u8_t found;
  modhost_plugin_store_error_t e;
  if (!modhost_plugin_store_get(key, &found, &e)) {
    *err = e;
    return false;
  }
  *count = 0;
  if (found.is_some) {
    char text[32] = {0};
    memcpy(text, found.val.ptr, found.val.len < 31 ? found.val.len : 31);
    *count = strtoull(text, NULL, 10);
    plugin_list_u8_free(&found.val);
  }
  return true;
}

static bool visits(plugin_request_t *req, plugin_response_t *ret, plugin_error_t *err) {
  char key[128];
  if (req->session.is_some) {
    snprintf(key, sizeof key, "visits.%.*s", (int)req->session.val.len, (const char *)req->session.val.ptr);
  } else {
    snprintf(key, sizeof key, "visits.anonymous");
  }
  plugin_string_t k;
  plugin_string_set(&k, key); /* a parameter, not returned: a borrowed pointer is fine */
  unsigned long long count;
  if (!stored_count(&k, &count, err)) return false;
  char text[32];
  int len = snprintf(text, sizeof text, "%llu", count + 1);
  plugin_list_u8_t value = {.ptr = (uint8_t *)text, .len = (size_t)len};
  uint64_t version;
  modhost_plugin_store_error_t e;
  if (!modhost_plugin_store_set(&k, &value, &version, &e)) {
    *err = e;
    return false;
  }
  /* Read it back: what the store holds is the answer, not what we meant to write. */
  if (!stored_count(&k, &count, err)) return false;
  char data[64];
  snprintf(data, sizeof data, "{\"visits\":%llu}", count);
  mh_ok(ret, data);
  return true;
}

static bool item(plugin_response_t *ret, plugin_error_t *err) {
  plugin_string_t path, name;
  plugin_string_set(&path, "templates.items." ROUBLES "._props.Name");
  modhost_plugin_db_error_t e;
  if (!modhost_plugin_db_get(&path, &name, &e)) {
    *err = e;
    return false;
  }
  /* The db answers JSON text: the name arrives quoted and escaped, ready to splice in. */
  char *data = malloc(name.len + 64);
  sprintf(data, "{\"id\":\"" ROUBLES "\",\"name\":%.*s}", (int)name.len, (const char *)name.ptr);
  plugin_string_free(&name);
  mh_ok(ret, data);
  free(data);
  return true;
}

bool exports_plugin_handle(plugin_request_t *req, plugin_response_t *ret, plugin_error_t *err) {
  bool ok;
  if (route_is(req, "/hello/item")) {
    ok = item(ret, err);
  } else if (route_is(req, "/hello/visits")) {
    ok = visits(req, ret, err);
  } else if (route_is(req, "/hello/items")) {
    mh_ok_db(ret, "templates.items");
    ok = true;
  } else if (route_is(req, "/hello/fail")) {
    mh_refuse(ret, 1, "hello refuses politely");
    ok = true;
  } else {
    ok = mh_fail(err, MODHOST_PLUGIN_TYPES_ERROR_NOT_FOUND, (const char *)req->route.ptr, req->route.len);
  }
  plugin_request_free(req);
  return ok;
}
