/* SPDX-License-Identifier: BSD-3-Clause */
/* gnio-testpmd interactive prompt, on DPDK's cmdline library. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>
#include <rte_common.h>
#include <rte_errno.h>

#include "testpmd.h"

static struct gnio_pipeline *cli_p;

struct cli_words {
	cmdline_fixed_string_t w0;
	cmdline_fixed_string_t w1;
	cmdline_fixed_string_t w2;
	cmdline_fixed_string_t w3;
};

static void
cli_start(void *res, struct cmdline *cl, void *data)
{
	int ret;

	RTE_SET_USED(res);
	RTE_SET_USED(data);
	if (gnio_pipeline_nb_ports_up(cli_p) == 0) {
		cmdline_printf(cl, "every port is stopped: nothing to forward (port start all)\n");
		return;
	}
	ret = gnio_pipeline_start(cli_p);
	if (ret == -EALREADY)
		cmdline_printf(cl, "Packet forwarding already started\n");
	else if (ret != 0)
		cmdline_printf(cl, "cannot start: %s %s\n", rte_strerror(-ret),
				gnio_pipeline_error(cli_p));
}

static void
cli_stop(void *res, struct cmdline *cl, void *data)
{
	int ret = gnio_pipeline_stop(cli_p);

	RTE_SET_USED(res);
	RTE_SET_USED(data);
	if (ret == -EALREADY) {
		cmdline_printf(cl, "Packet forwarding not started\n");
		return;
	}
	if (ret != 0)
		cmdline_printf(cl, "consumer error: %s\n", gnio_pipeline_error(cli_p));
	app_show_fwd_stats(cli_p);
}

static void
cli_quit(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(data);
	cmdline_quit(cl);
}

static void
cli_show(void *res, struct cmdline *cl, void *data)
{
	struct cli_words *w = res;

	RTE_SET_USED(cl);
	RTE_SET_USED(data);
	if (strcmp(w->w1, "port") == 0)
		app_show_port_stats(cli_p);
	else
		app_show_fwd_stats(cli_p);
}

static void
cli_set_fwd(void *res, struct cmdline *cl, void *data)
{
	struct cli_words *w = res;
	int ret;

	RTE_SET_USED(data);
	ret = gnio_pipeline_set_handler(cli_p, w->w2);
	if (ret == -ENOENT)
		cmdline_printf(cl, "unknown forwarding mode %s (have: %s)\n", w->w2,
				gnio_handler_names());
	else if (ret == -EBUSY)
		cmdline_printf(cl, "Please stop forwarding first\n");
	else if (ret != 0)
		cmdline_printf(cl, "cannot set %s: %s\n", w->w2, rte_strerror(-ret));
	else
		cmdline_printf(cl, "Set %s packet forwarding mode\n", w->w2);
}

static void
cli_port(void *res, struct cmdline *cl, void *data)
{
	struct cli_words *w = res;
	const struct gnio_conf *c = gnio_pipeline_conf(cli_p);
	bool stop = strcmp(w->w1, "stop") == 0;
	bool all = strcmp(w->w2, "all") == 0;
	char *end;
	long want = strtol(w->w2, &end, 10);

	RTE_SET_USED(data);
	if (!all && (*end != '\0' || want < 0)) {
		cmdline_printf(cl, "port %s: expected a port id or all\n", w->w1);
		return;
	}
	for (uint16_t i = 0; i < c->ports.nb; i++) {
		int ret;

		if (!all && c->ports.ids[i] != want)
			continue;
		ret = stop ? gnio_pipeline_port_stop(cli_p, i) : gnio_pipeline_port_start(cli_p, i);
		if (ret == 0)
			cmdline_printf(cl, "Port %u %s\n", c->ports.ids[i], stop ? "stopped" : "started");
		else if (ret == -EALREADY)
			cmdline_printf(cl, "Port %u already %s\n", c->ports.ids[i],
					stop ? "stopped" : "started");
		else
			cmdline_printf(cl, "Port %u: %s\n", c->ports.ids[i], rte_strerror(-ret));
		if (!all)
			return;
	}
	if (!all)
		cmdline_printf(cl, "port %ld is not in use\n", want);
}

#define CLI_WORD(field, words) \
	TOKEN_STRING_INITIALIZER(struct cli_words, field, words)

static cmdline_parse_token_string_t t_start = CLI_WORD(w0, "start");
static cmdline_parse_token_string_t t_stop = CLI_WORD(w0, "stop");
static cmdline_parse_token_string_t t_quit = CLI_WORD(w0, "quit");
static cmdline_parse_token_string_t t_show = CLI_WORD(w0, "show");
static cmdline_parse_token_string_t t_portfwd = CLI_WORD(w1, "port#fwd");
static cmdline_parse_token_string_t t_stats = CLI_WORD(w2, "stats");
static cmdline_parse_token_string_t t_all = CLI_WORD(w3, "all");
static cmdline_parse_token_string_t t_set = CLI_WORD(w0, "set");
static cmdline_parse_token_string_t t_fwd = CLI_WORD(w1, "fwd");
static cmdline_parse_token_string_t t_mode = CLI_WORD(w2, NULL);
static cmdline_parse_token_string_t t_port = CLI_WORD(w0, "port");
static cmdline_parse_token_string_t t_stopstart = CLI_WORD(w1, "stop#start");
static cmdline_parse_token_string_t t_which = CLI_WORD(w2, NULL);

static cmdline_parse_inst_t c_start = {
	.f = cli_start, .help_str = "start: start forwarding",
	.tokens = { (void *)&t_start, NULL },
};
static cmdline_parse_inst_t c_stop = {
	.f = cli_stop, .help_str = "stop: stop forwarding (drains) and show statistics",
	.tokens = { (void *)&t_stop, NULL },
};
static cmdline_parse_inst_t c_quit = {
	.f = cli_quit, .help_str = "quit: stop and exit",
	.tokens = { (void *)&t_quit, NULL },
};
static cmdline_parse_inst_t c_show = {
	.f = cli_show, .help_str = "show port|fwd stats all",
	.tokens = { (void *)&t_show, (void *)&t_portfwd, (void *)&t_stats, (void *)&t_all, NULL },
};
static cmdline_parse_inst_t c_set_fwd = {
	.f = cli_set_fwd, .help_str = "set fwd <mode>: change the forwarding mode (stopped)",
	.tokens = { (void *)&t_set, (void *)&t_fwd, (void *)&t_mode, NULL },
};

static cmdline_parse_inst_t c_port = {
	.f = cli_port, .help_str = "port stop|start <id>|all: also while forwarding",
	.tokens = { (void *)&t_port, (void *)&t_stopstart, (void *)&t_which, NULL },
};

static cmdline_parse_ctx_t cli_ctx[] = {
	(cmdline_parse_inst_t *)&c_port,
	(cmdline_parse_inst_t *)&c_start,
	(cmdline_parse_inst_t *)&c_stop,
	(cmdline_parse_inst_t *)&c_quit,
	(cmdline_parse_inst_t *)&c_show,
	(cmdline_parse_inst_t *)&c_set_fwd,
	NULL,
};

void
app_prompt(struct gnio_pipeline *p)
{
	struct cmdline *cl;

	cli_p = p;
	cl = cmdline_stdin_new(cli_ctx, "gnio> ");
	if (cl == NULL)
		app_fail("cannot start the prompt");
	cmdline_interact(cl);
	cmdline_stdin_exit(cl);
}
