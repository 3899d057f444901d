/* SPDX-License-Identifier: MIT
 *
 * serve_config_value.c: the checks on single values of `sinew serve`'s
 * settings (serve_config_internal.h). Everything here reads text a user
 * typed, so every byte is checked and nothing is assumed about length.
 */
#include "serve_config_internal.h"

#include <string.h>

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

void serve_value_show_prefix(const char *value, size_t length, char *out,
                             size_t size)
{
    static const char ellipsis[] = "...";
    size_t room;
    size_t i;

    ASSERT(value != NULL && out != NULL);
    ASSERT(size > sizeof(ellipsis));
    room = size - 1;
    if (length > room) {
        room -= sizeof(ellipsis) - 1;
    }
    for (i = 0; i < length && i < room; i++) {
        unsigned char c = (unsigned char)value[i];

        out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[i] = '\0';
    if (i < length) {
        memcpy(out + i, ellipsis, sizeof(ellipsis));
    }
}

void serve_value_show(const char *value, char *out, size_t size)
{
    serve_value_show_prefix(value, strlen(value), out, size);
}

/* HOST without brackets: a name or an IPv4 address. */
static bool host_name_is_valid(const char *host, size_t length)
{
    if (length == 0) {
        return false;
    }
    for (size_t i = 0; i < length; i++) {
        char c = host[i];

        if (!is_alnum(c) && c != '.' && c != '-' && c != '_') {
            return false;
        }
    }
    return true;
}

/* The inside of "[...]": an IPv6 address, perhaps with a zone. */
static bool host_v6_is_valid(const char *host, size_t length)
{
    bool has_colon = false;

    for (size_t i = 0; i < length; i++) {
        char c = host[i];

        if (!is_alnum(c) && c != ':' && c != '.' && c != '%') {
            return false;
        }
        has_colon = has_colon || c == ':';
    }
    return has_colon;
}

bool serve_value_address_is_valid(const char *text, bool port_zero_ok)
{
    size_t length = strlen(text);
    const char *colon;
    uint64_t port;

    if (length == 0 || length > SERVE_VALUE_ADDRESS_LENGTH_MAX) {
        return false;
    }
    if (text[0] == '[') {
        const char *close = strchr(text, ']');

        if (close == NULL || close[1] != ':' ||
            !host_v6_is_valid(text + 1, (size_t)(close - text - 1))) {
            return false;
        }
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (colon == NULL ||
            !host_name_is_valid(text, (size_t)(colon - text))) {
            return false;
        }
    }
    if (strlen(colon + 1) > 5 ||
        !serve_value_parse_uint(colon + 1, UINT16_MAX, &port)) {
        return false;
    }
    return port > 0 || port_zero_ok;
}

bool serve_value_address_is_wildcard(const char *text)
{
    return strncmp(text, "0.0.0.0:", 8) == 0 || strncmp(text, "[::]:", 5) == 0;
}

bool serve_value_parse_uint(const char *text, uint64_t max, uint64_t *out)
{
    uint64_t value = 0;

    if (text[0] == '\0') {
        return false;
    }
    for (const char *p = text; *p != '\0'; p++) {
        uint64_t digit = (uint64_t)(*p - '0');

        if (!is_digit(*p) || digit > max || value > (max - digit) / 10) {
            return false;
        }
        value = value * 10 + digit;
    }
    *out = value;
    return true;
}

bool serve_value_parse_size(const char *text, uint64_t *out)
{
    static const char suffixes[] = "kKmMgG";
    char digits[24];
    size_t length = strlen(text);
    const char *suffix;
    unsigned shift = 0;
    uint64_t value;

    if (length == 0 || length >= sizeof(digits)) {
        return false;
    }
    suffix = strchr(suffixes, text[length - 1]);
    if (suffix != NULL) {
        shift = 10 * (unsigned)(1 + (suffix - suffixes) / 2);
        length--;
    }
    memcpy(digits, text, length);
    digits[length] = '\0';
    if (!serve_value_parse_uint(digits, UINT64_MAX >> shift, &value)) {
        return false;
    }
    *out = value << shift;
    return true;
}

bool serve_value_parse_node_id(const char *text, size_t length,
                               struct transport_node_id *out)
{
    char hex[TRANSPORT_NODE_ID_TEXT_SIZE];

    if (length != TRANSPORT_NODE_ID_TEXT_SIZE - 1) {
        return false;
    }
    memcpy(hex, text, length);
    hex[length] = '\0';
    return transport_node_id_parse(hex, out) == 0;
}

bool serve_value_parse_peer(const char *text, struct serve_peer *out)
{
    const char *at = strchr(text, '@');
    const char *address;

    if (at == NULL ||
        !serve_value_parse_node_id(text, (size_t)(at - text), &out->id)) {
        return false;
    }
    address = at + 1;
    if (!serve_value_address_is_valid(address, false) ||
        serve_value_address_is_wildcard(address)) {
        return false;
    }
    STATIC_ASSERT(sizeof(out->address) > SERVE_VALUE_ADDRESS_LENGTH_MAX,
                  "a valid address fits struct serve_peer");
    memcpy(out->address, address, strlen(address) + 1);
    return true;
}

bool serve_value_join_url_is_valid(const char *text)
{
    static const char scheme[] = "http://";
    char address[SERVE_VALUE_ADDRESS_LENGTH_MAX + 1];
    size_t length;

    if (strncmp(text, scheme, sizeof(scheme) - 1) != 0) {
        return false;
    }
    text += sizeof(scheme) - 1;
    length = strlen(text);
    if (length > 0 && text[length - 1] == '/') {
        length--;
    }
    if (length >= sizeof(address)) {
        return false;
    }
    memcpy(address, text, length);
    address[length] = '\0';
    return serve_value_address_is_valid(address, false) &&
           !serve_value_address_is_wildcard(address);
}
