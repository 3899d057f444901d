/* SPDX-License-Identifier: MIT
 *
 * fuzz_hrana.c: libFuzzer target for what a client sends `sinew serve`: the
 * bytes are a Hrana pipeline body, parsed, classified (read or write) and,
 * when they parse, run on an in-memory engine database on a fresh stream,
 * then the response is encoded. Any crash, sanitizer report or leak is a
 * bug: bad input must become an error answer (hrana.h). `make fuzz` runs
 * it from fuzz_seeds_hrana/.
 */
#include <stdint.h>

#include "hrana.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hrana_pipeline pipeline;
    struct hrana_streams *streams = NULL;
    struct hrana_stream *stream = NULL;
    struct engine_db *db = NULL;
    struct hrana_run_outcome outcome = {0};
    const struct hrana_run_options options = {.in_group_transaction =
                                                  (size & 1) != 0};
    const char *baton = NULL;
    char error[256];
    size_t response_size = 0;

    if (hrana_pipeline_parse((const char *)data, size, 2, &pipeline, error,
                             sizeof error) != 0) {
        return 0;
    }
    (void)hrana_pipeline_access(NULL, &pipeline);
    if (hrana_streams_new(4, &streams) == 0 &&
        hrana_streams_take(streams, NULL, 0, &stream) == 0 &&
        engine_open(NULL, &db) == 0 &&
        hrana_pipeline_run(stream, db, &pipeline, &options, &outcome) == 0) {
        hrana_streams_put_back(streams, stream, outcome.closed, 1, &baton);
        stream = NULL;
        common_free(
            hrana_response_encode(baton, outcome.results, &response_size));
        json_decref(outcome.results);
    }
    if (stream != NULL) {
        hrana_streams_put_back(streams, stream, true, 1, &baton);
    }
    engine_close(db);
    hrana_streams_free(streams);
    hrana_pipeline_release(&pipeline);
    return 0;
}
