/* SPDX-License-Identifier: MIT
 *
 * transfer_export.c: `sinew export SINEW_FILE SQLITE_FILE`, a sinew
 * database copied into a new C SQLite database (transfer.h; the copy is
 * transfer_copy.c, the file handling and command line transfer_run.c).
 */
#include "transfer_int.h"

const struct transfer_direction transfer_export_direction = {
    .command = "export",
    .verb = "exporting",
    .done = "exported",
    .source = TRANSFER_KIND_ENGINE,
    .target = TRANSFER_KIND_SQLITE,
    .usage = export_usage,
};

int transfer_export(const char *sinew_path, const char *sqlite_path,
                    const struct transfer_options *options,
                    struct transfer_summary *summary, char *error,
                    size_t error_size)
{
    return transfer_run(&transfer_export_direction, sinew_path, sqlite_path,
                        options, summary, error, error_size);
}

void export_usage(FILE *stream)
{
    fprintf(stream,
            "Usage: sinew export SINEW_FILE SQLITE_FILE\n"
            "Copies the sinew database SINEW_FILE into a new SQLite\n"
            "database SQLITE_FILE, which must not exist: tables with their\n"
            "rows and rowids, and indexes. SINEW_FILE must not be open in\n"
            "another process (a running node). On failure nothing is left\n"
            "at SQLITE_FILE.\n"
            "  -h, --help  show this message\n");
}

int export_main(int argc, char **argv)
{
    return transfer_main(&transfer_export_direction, argc, argv);
}
