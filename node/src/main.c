/* SPDX-License-Identifier: MIT
 *
 * main.c: the sinew binary's only main(). It picks the subcommand from
 * argv[1] in a table of {name, run, summary} and hands it the remaining
 * arguments; each subcommand returns its exit status. New subcommands
 * are one row of the table.
 *
 * Exit status 2 means bad usage: an unknown subcommand or option.
 */
#include <stdio.h>
#include <string.h>

#include "cluster_cli.h"
#include "keygen.h"
#include "serve.h"
#include "shell.h"
#include "transfer.h"

#ifndef SINEW_VERSION
#error "SINEW_VERSION must come from CMake's PROJECT_VERSION"
#endif

#define SINEW_EXIT_USAGE 2

struct sinew_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv after the name */
    const char *summary;
};

static const struct sinew_command commands[] = {
    {"serve", serve_main, "run a node: clients over HTTP, peers over TCP"},
    {"shell", shell_main, "run SQL interactively or from standard input"},
    {"import", import_main, "copy a SQLite database into a new sinew one"},
    {"export", export_main, "copy a sinew database into a new SQLite one"},
    {"keygen", keygen_main, "make a node identity key file, print its id"},
    {"cluster", cluster_main, "a node's status and quorum membership"},
};

#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *stream)
{
    fprintf(stream, "Usage: sinew COMMAND [OPTIONS]\n"
                    "       sinew --help | --version\n\nCommands:\n");
    for (size_t i = 0; i < COMMAND_COUNT; i++) {
        fprintf(stream, "  %-10s %s\n", commands[i].name, commands[i].summary);
    }
    fprintf(stream, "\nRun 'sinew COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SINEW_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("sinew %s\n", SINEW_VERSION);
        return 0;
    }
    for (size_t i = 0; i < COMMAND_COUNT; i++) {
        if (strcmp(name, commands[i].name) == 0) {
            return commands[i].run(argc - 2, argv + 2);
        }
    }
    fprintf(stderr, "sinew: unknown command '%s'\n", name);
    usage(stderr);
    return SINEW_EXIT_USAGE;
}
