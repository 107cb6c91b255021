/* impulse: the umbrella header. */
#ifndef IMPULSE_H
#define IMPULSE_H

#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/nn.h"
#include "impulse/integrate.h"
#include "impulse/report.h"
#include "impulse/contact_systems.h"
#include "impulse/contact.h"
#include "impulse/train.h"
#include "impulse/cdl.h"
#include "impulse/constrained.h"
#include "impulse/chnn_systems.h"
#include "impulse/flat.h"
#include "impulse/impact.h"
#include "impulse/impact_models.h"
#include "impulse/impact_analysis.h"
#include "impulse/impact_reproduce.h"
#include "impulse/gp.h"
#include "impulse/drop.h"
#include "impulse/chnn_models.h"
#include "impulse/rigid_traj.h"

#endif
