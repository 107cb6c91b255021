/* impulse: the umbrella header. */
#ifndef IMPULSE_H
#define IMPULSE_H

#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/nn.h"
#include "impulse/integrate.h"
#include "impulse/report.h"
#include "impulse/contact_systems.h"
#include "impulse/cdl.h"

#endif
