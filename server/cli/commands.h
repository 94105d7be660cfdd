/*
 * commands.h — the `stallscope` subcommands, one file each
 * (server/cli/cmd_<name>.c). Each takes the arguments after its own name
 * (argv[0] is the subcommand name), prints --help, and returns the process
 * exit status: 0 success, 1 failure (one-line message on stderr), 2 usage.
 */
#ifndef STALLSCOPE_SERVER_COMMANDS_H
#define STALLSCOPE_SERVER_COMMANDS_H

int srv_cmd_serve(int argc, char **argv);
int srv_cmd_migrate(int argc, char **argv);
int srv_cmd_app(int argc, char **argv);
int srv_cmd_symbolicate(int argc, char **argv);
int srv_cmd_symcache(int argc, char **argv);
int srv_cmd_purge(int argc, char **argv);
int srv_cmd_reprocess(int argc, char **argv);
int srv_cmd_system_symbols(int argc, char **argv);
int srv_cmd_demo(int argc, char **argv);
int srv_cmd_demangle(int argc, char **argv);
int srv_cmd_check(int argc, char **argv);

#endif
