// libcurl for Filmstrip's HTTP transport on Linux (the library FoundationNetworking itself is built on). Its
// option and information calls are variadic, which Swift cannot call: each kind of argument gets a typed wrapper.
#ifndef FILMSTRIP_CCURL_SHIM_H
#define FILMSTRIP_CCURL_SHIM_H

#include <curl/curl.h>

typedef size_t (*filmstrip_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode filmstrip_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode filmstrip_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode filmstrip_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode filmstrip_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode filmstrip_curl_set_callback(CURL *handle, CURLoption option, filmstrip_curl_data_callback f) {
    return curl_easy_setopt(handle, option, f);
}

static inline CURLcode filmstrip_curl_info_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode filmstrip_curl_info_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode filmstrip_curl_multi_set_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURL *filmstrip_curl_message_handle(CURLMsg *message) { return message->easy_handle; }
static inline int filmstrip_curl_message_done(CURLMsg *message) { return message->msg == CURLMSG_DONE; }
static inline CURLcode filmstrip_curl_message_result(CURLMsg *message) { return message->data.result; }

#endif
