/*
 * main.c — `stallscope SUBCOMMAND …`: git-style dispatch to server/cli/cmd_*.c.
 */
#include <stdio.h>
#include <string.h>

#include "server/cli/commands.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"serve", srv_cmd_serve, "run the HTTP server"},
	{"migrate", srv_cmd_migrate, "apply database migrations"},
	{"app", srv_cmd_app, "manage apps (app create BUNDLE_ID)"},
	{"symbolicate", srv_cmd_symbolicate, "symbolize addresses offline"},
	{"symcache", srv_cmd_symcache, "write or describe a symcache"},
	{"demangle", srv_cmd_demangle, "show Swift and C++ names as people read them"},
	{"purge", srv_cmd_purge, "apply retention now"},
	{"reprocess", srv_cmd_reprocess, "re-symbolize reports waiting for symbols"},
	{"check", srv_cmd_check, "verify that the stored counts agree"},
	{"system-symbols", srv_cmd_system_symbols,
	 "import or list the system symbols of every app"},
	{"demo", srv_cmd_demo, "fill an app of a running server with demo data"},
};

static void usage(FILE *to)
{
	fprintf(to, "usage: stallscope COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(to, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(to, "\n`stallscope COMMAND --help` describes one command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "stallscope: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
