/*
 * tandem.h - the Tandem task runtime, all public headers.
 */
#ifndef TANDEM_TANDEM_H
#define TANDEM_TANDEM_H

#include "task.h"
#include "pool.h"
#include "runtime.h"
#include "stream.h"
#include "channel.h"
#include "operators.h"
#include "adapter.h"
#include "cancel.h"
#include "completion.h"
#include "async.h"
#include "loop.h"
#include "compose.h"
#include "context.h"
#include "threads.h"
#include "shared.h"
#include "forget.h"
#include "tracking.h"
#include "timer.h"

#endif
