/* cmd_purge.c — placeholder until the server issue lands; replaced wholesale. */
#include <stdio.h>

#include "server/commands.h"

int srv_cmd_purge(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "stallscope purge: not built yet\n");
	return 1;
}
