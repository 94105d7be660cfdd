/* cmd_serve.c — placeholder until the server issue lands; replaced wholesale. */
#include <stdio.h>

#include "server/commands.h"

int srv_cmd_serve(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "stallscope serve: not built yet\n");
	return 1;
}
