#ifndef PTXJIT_H
#define PTXJIT_H

// Everything a ptxjit user needs. DLPack interop is opt-in: include "ptxjit/DLPack.h" (it needs
// DLPack's header, Debian's libdlpack-dev).

#include "ptxjit/BoundaryConditions.h"
#include "ptxjit/Buffer.h"
#include "ptxjit/DeviceBuffers.h"
#include "ptxjit/Error.h"
#include "ptxjit/Expr.h"
#include "ptxjit/Float16.h"
#include "ptxjit/Func.h"
#include "ptxjit/IROperator.h"
#include "ptxjit/InlineReductions.h"
#include "ptxjit/JIT.h"
#include "ptxjit/Lambda.h"
#include "ptxjit/Param.h"
#include "ptxjit/Pipeline.h"
#include "ptxjit/RDom.h"
#include "ptxjit/Target.h"
#include "ptxjit/Type.h"
#include "ptxjit/Var.h"
#include "ptxjit/Version.h"

#endif
