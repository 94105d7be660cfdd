/* cmd_app.c — placeholder until the server issue lands; replaced wholesale. */
#include <stdio.h>

#include "server/commands.h"

int srv_cmd_app(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "stallscope app: not built yet\n");
	return 1;
}
