/*
 * task_model_cancel.c - the model's cancellation sources (cancel.h): cancelled once, the
 * registered callbacks run on the cancelling thread in reverse registration order, each
 * exactly once; a registration on a cancelled source runs at once.
 */
#include "task_model.h"
#include "task_model_internal.h"
#include <string.h>
#include <tandem/tandem.h>

void tm_add_reg_(tm_model *m, int c, int type, int target)
{
    tm_cancel_state *s = &m->cs[c];
    if (s->nregs >= TM_MAX_REGS_PER_CS)
        return;
    s->regs[s->nregs].type = type;
    s->regs[s->nregs].target = target;
    s->regs[s->nregs].active = 1;
    s->nregs++;
}

/* ---- cancellation (cancel.h) --------------------------------------------------------------- */

int tm_new_cancel(tm_model *m)
{
    if (m->ncs >= TM_MAX_CS)
        return -1;
    memset(&m->cs[m->ncs], 0, sizeof(m->cs[0]));
    return m->ncs++;
}

static void run_reg(tm_model *m, const tm_reg *r)
{
    tm_outcome o = tm_canceled_outcome_();
    tm_handle *h;
    switch (r->type) {
    case TM_REG_WAIT:
    case TM_REG_ADAPTER:
        tm_finish_(m, r->target, &o);
        break;
    case TM_REG_ATTACH:         /* cancels with the token unless the input decided first */
        h = &m->h[r->target];
        if (!h->decided) {
            h->decided = 1;
            tm_finish_(m, r->target, &o);
        }
        break;
    case TM_REG_LINK:
        tm_cancel_source_(m, r->target);
        break;
    case TM_REG_TIMEOUT:        /* the delay's cancel_immediately: the timeout reads canceled */
        tm_timeout_delay_done_(m, r->target, TD_CANCELED);
        break;
    case TM_REG_USER:
        m->ur[r->target].runs_expected++;
        break;
    }
}

/* Cancelled once; the callbacks run on the cancelling thread in reverse registration order,
 * each exactly once. */
int tm_cancel_source_(tm_model *m, int c)
{
    tm_cancel_state *s = &m->cs[c];
    if (s->cancelled)
        return 0;
    s->cancelled = 1;
    for (int k = s->nregs - 1; k >= 0; k--) {
        if (!s->regs[k].active)
            continue;
        s->regs[k].active = 0;
        tm_reg r = s->regs[k];
        run_reg(m, &r);
    }
    return 1;
}

int tm_cancel(tm_model *m, int c) { return tm_cancel_source_(m, c); }

int tm_linked(tm_model *m, int a, int b)
{
    int c = tm_new_cancel(m);
    if (c < 0)
        return -1;
    int parents[2] = { a, b };
    for (int k = 0; k < 2; k++) {
        if (m->cs[parents[k]].cancelled)
            tm_cancel_source_(m, c);        /* a registration on a cancelled source runs now */
        else
            tm_add_reg_(m, parents[k], TM_REG_LINK, c);
    }
    return c;
}

int tm_cancel_register(tm_model *m, int c)
{
    if (m->nur >= TM_MAX_USER_REGS)
        return -1;
    int r = m->nur++;
    m->ur[r].cs = c;
    m->ur[r].runs_expected = 0;
    m->ur[r].slot = -1;
    if (m->cs[c].cancelled) {
        m->ur[r].runs_expected = 1;     /* already cancelled: runs now, empty registration */
    } else if (m->cs[c].nregs < TM_MAX_REGS_PER_CS) {
        m->ur[r].slot = m->cs[c].nregs;
        tm_add_reg_(m, c, TM_REG_USER, r);
    }
    return r;
}

void tm_cancel_unregister(tm_model *m, int r)
{
    tm_user_reg *u = &m->ur[r];
    if (u->slot >= 0)
        m->cs[u->cs].regs[u->slot].active = 0;
}

int tm_may_cancel_after(const tm_model *m, int c)
{
    return !m->cs[c].cancelled && !m->cs[c].armed && m->nitems < TM_MAX_ITEMS;
}

void tm_cancel_after(tm_model *m, int c, int64_t ns)
{
    m->cs[c].armed = 1;
    tm_add_item_(m, TM_ITEM_CANCEL_AFTER, c, m->now + ns);
}

