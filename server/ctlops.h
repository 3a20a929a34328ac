/*
 * ctlops.h -- the server's side of the controllers' store interface
 * (controllers/ctl.h, struct ctl_store): deletes and updates through the
 * same strategies as DELETE and PUT, owner lookups, namespaced resources.
 */
#ifndef LAPIS_CTLOPS_H
#define LAPIS_CTLOPS_H

#include "lapis/engine.h"

struct ctl_store;

/* Fill *out for the store e (which must outlive every controller). */
void srv_ctl_store(eng *e, struct ctl_store *out);

#endif
