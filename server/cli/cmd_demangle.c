/*
 * cmd_demangle.c — `stallscope demangle [--full] [NAME…]`: names as the
 * server shows them, as c++filt and `swift demangle` print them: one line
 * out per name (the arguments, else standard input, a name a line), the
 * demangled form, or the name unchanged when it is not one we demangle.
 * Swift names print in their short form (what a frame shows, SPEC §3.6),
 * or with --full as `swift demangle` does; C++ names have one form.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cli/commands.h"
#include "symbolizer/symbolizer.h"

static void usage(FILE *to)
{
	fprintf(to, "usage: stallscope demangle [--full] [NAME ...]\n"
		    "\n"
		    "Prints each NAME (else each line of standard input) demangled, one line\n"
		    "per name: Swift ($s…, _$s…, $S…, _$S…, _T0…) in the short form a stack\n"
		    "frame shows, or with --full as `swift demangle` prints it; C++ (_Z…,\n"
		    "or __Z… as Mach-O symbol tables spell it) as c++filt does. Anything else,\n"
		    "or a name that does not parse, is printed unchanged.\n");
}

/* NAME as shown, on its own line. */
static void print_one(const char *name, sym_demangle_style style)
{
	/* A Mach-O symbol table adds '_' before C++'s own "_Z". */
	const char *plain = strncmp(name, "__Z", 3) == 0 ? name + 1 : name;
	char *shown = sym_demangle(plain, style);
	fputs(shown ? shown : name, stdout);
	fputc('\n', stdout);
	free(shown);
}

static int from_stdin(sym_demangle_style style)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, stdin)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		print_one(line, style);
	}
	free(line);
	return ferror(stdin) ? 1 : 0;
}

int srv_cmd_demangle(int argc, char **argv)
{
	static const struct option opts[] = {
		{"full", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	sym_demangle_style style = SYM_DEMANGLE_SHORT;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (opt) {
		case 'f': style = SYM_DEMANGLE_FULL; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind == argc)
		return from_stdin(style);
	for (int i = optind; i < argc; i++)
		print_one(argv[i], style);
	return fflush(stdout) == 0 ? 0 : 1;
}
