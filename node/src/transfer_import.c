/* SPDX-License-Identifier: MIT
 *
 * transfer_import.c: `sinew import SQLITE_FILE SINEW_FILE`, a C SQLite
 * database (opened read-only) copied into a new sinew database
 * (transfer.h; the copy is transfer_copy.c, the file handling and command
 * line transfer_run.c).
 */
#include "transfer_int.h"

const struct transfer_direction transfer_import_direction = {
    .command = "import",
    .verb = "importing",
    .done = "imported",
    .source = TRANSFER_KIND_SQLITE,
    .target = TRANSFER_KIND_ENGINE,
    .usage = import_usage,
};

int transfer_import(const char *sqlite_path, const char *sinew_path,
                    const struct transfer_options *options,
                    struct transfer_summary *summary, char *error,
                    size_t error_size)
{
    return transfer_run(&transfer_import_direction, sqlite_path, sinew_path,
                        options, summary, error, error_size);
}

void import_usage(FILE *stream)
{
    fprintf(stream,
            "Usage: sinew import SQLITE_FILE SINEW_FILE\n"
            "Copies the SQLite database SQLITE_FILE (only read) into a new\n"
            "sinew database SINEW_FILE, which must not exist: tables with\n"
            "their rows and rowids, indexes, and views and triggers where\n"
            "sinew supports them (others are skipped with a warning).\n"
            "On failure nothing is left at SINEW_FILE.\n"
            "  -h, --help  show this message\n");
}

int import_main(int argc, char **argv)
{
    return transfer_main(&transfer_import_direction, argc, argv);
}
