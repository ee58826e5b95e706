/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's bottom layer (pipeline_core.h): its log type, the notes a
 * phase leaves for the application, the handler's binding to the consumers,
 * and the public getters of what creation resolved. Every phase calls down to
 * here; nothing here calls a phase.
 */
#include <stdarg.h>
#include <stdio.h>

#include <rte_log.h>

#include "gnio.h"
#include "gnio_config.h"
#include "pipeline_core.h"

RTE_LOG_REGISTER(gnio_pipeline_logtype, gnio.pipeline, NOTICE);

void
pl_note(struct gnio_pipeline *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nb_notes >= PL_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(p->notes[p->nb_notes], sizeof(p->notes[0]), fmt, ap);
	va_end(ap);
	/* Returned to the caller (gnio_pipeline_note), who says it: logged only for debugging. */
	PL_LOG(DEBUG, "%s", p->notes[p->nb_notes]);
	p->nb_notes++;
}

/* The handler's state: the engine context for a built-in, else the application's. */
void
pl_bind_handler(struct gnio_pipeline *p)
{
	/* Read by the RX lcores on every burst: one flag beside the others they read. */
	p->rx_generates = (p->conf.handler->flags & GNIO_HANDLER_GENERATES) != 0;
	for (uint16_t g = 0; g < p->nb_gpu; g++) {
		struct gnio_consumer *cons = &p->gpu[g].consumer;

		cons->handler = p->conf.handler;
		cons->state = pl_runs_builtin(p) ? (void *)p->gpu[g].ctx :
			p->gpu[g].state != NULL ? p->gpu[g].state : p->conf.state;
	}
}

const char *
gnio_version(void)
{
	return GNIO_VERSION;
}

const struct gnio_conf *
gnio_pipeline_conf(const struct gnio_pipeline *p)
{
	return &p->pub;
}

unsigned int
gnio_pipeline_nb_notes(const struct gnio_pipeline *p)
{
	return p->nb_notes;
}

const char *
gnio_pipeline_note(const struct gnio_pipeline *p, unsigned int i)
{
	return i < p->nb_notes ? p->notes[i] : "";
}
