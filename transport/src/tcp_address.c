/* SPDX-License-Identifier: MIT
 *
 * tcp_address.c: the TCP transport's addresses, "host:port" with a numeric
 * host: "127.0.0.1:7000" or "[::1]:7000". Names are refused rather than
 * resolved: resolving would block the loop (or need an asynchronous step
 * before every dial), and a node's configuration can resolve once, up
 * front. Port 0 is accepted (listen picks a free port).
 */
#include "tcp.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static int port_parse(const char *text, int *out)
{
    int port = 0;

    if (*text == '\0') {
        return TRANSPORT_EADDRESS;
    }
    for (; *text != '\0'; text++) {
        if (*text < '0' || *text > '9') {
            return TRANSPORT_EADDRESS;
        }
        port = port * 10 + (*text - '0');
        if (port > 65535) {
            return TRANSPORT_EADDRESS;
        }
    }
    *out = port;
    return 0;
}

int transport__tcp_address_parse(const char *text, struct sockaddr_storage *out)
{
    char host[TRANSPORT__TCP_ADDRESS_TEXT_SIZE];
    struct sockaddr_storage address;
    const char *colon;
    size_t host_size;
    int port;
    int rc;

    ASSERT(text != NULL);
    ASSERT(out != NULL);
    colon = strrchr(text, ':');
    if (colon == NULL || colon == text) {
        return TRANSPORT_EADDRESS;
    }
    host_size = (size_t)(colon - text);
    if (host_size >= sizeof(host) || port_parse(colon + 1, &port) != 0) {
        return TRANSPORT_EADDRESS;
    }
    memset(&address, 0, sizeof(address));
    if (text[0] == '[' && text[host_size - 1] == ']' && host_size > 2) {
        memcpy(host, text + 1, host_size - 2);
        host[host_size - 2] = '\0';
        rc = uv_ip6_addr(host, port, (struct sockaddr_in6 *)&address);
    } else {
        memcpy(host, text, host_size);
        host[host_size] = '\0';
        rc = uv_ip4_addr(host, port, (struct sockaddr_in *)&address);
    }
    if (rc != 0) {
        return TRANSPORT_EADDRESS;
    }
    *out = address;
    return 0;
}

void transport__tcp_address_format(const struct sockaddr *address, char *out,
                                   size_t size)
{
    char host[TRANSPORT__TCP_ADDRESS_TEXT_SIZE] = "?";
    int port = 0;

    ASSERT(address != NULL);
    ASSERT(out != NULL);
    ASSERT(size >= TRANSPORT__TCP_ADDRESS_TEXT_SIZE);
    if (address->sa_family == AF_INET) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)address;

        uv_ip4_name(in4, host, sizeof(host));
        port = ntohs(in4->sin_port);
        snprintf(out, size, "%s:%d", host, port);
    } else if (address->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)address;

        uv_ip6_name(in6, host, sizeof(host));
        port = ntohs(in6->sin6_port);
        snprintf(out, size, "[%s]:%d", host, port);
    } else {
        snprintf(out, size, "?");
    }
}
