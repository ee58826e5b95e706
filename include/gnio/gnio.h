/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * gnio: network packets in front of GPU code at line rate, on DPDK. The one
 * header an application includes (C or C++; nvcc code includes the device
 * headers under <gnio/device/> instead).
 *
 * Build and link with pkg-config:
 *
 *     cc app.c $(pkg-config --cflags --libs libgnio)
 *     nvcc -std=c++17 -c handler.cu $(pkg-config --cflags libgnio-device)
 *     cc app.c handler.o $(pkg-config --cflags --libs libgnio) $(pkg-config --libs libgnio-device)
 *
 * Device code needs compute capability 8.0 or newer (sm_80: A100, H100,
 * H200); libgnio-device's flags carry the architectures gnio was built for,
 * its libraries what an object nvcc made needs (-lcudart, -lstdc++: it is C++,
 * also in a C program). A staged install (meson install --destdir STAGE):
 * PKG_CONFIG_PATH=STAGE/.../pkgconfig alone, the .pc files find their prefix
 * from where they are.
 *
 * Registration. gnio's gpudev drivers (gnio_host, gnio_cuda), its consumers
 * and its built-in handlers register themselves: the drivers from
 * constructors when libgnio is loaded, the consumers and handlers when
 * gnio_pipeline_create() (or a lookup) first runs. With the shared library
 * (the default of `pkg-config --libs libgnio`) nothing more is needed. The
 * static library must be linked whole, so the drivers' constructors are
 * kept; libgnio-static.pc says how (DPDK stays shared):
 *
 *     cc app.c $(pkg-config --cflags --libs libgnio-static)
 *
 * An application's own handlers and kernels register from their objects'
 * constructors (GNIO_HANDLER_HOST(), GNIO_CUDA_HANDLER(),
 * GNIO_CUDA_KERNEL()), which a direct link keeps.
 *
 * The shortest program, and what a program must do on signals and errors:
 * docs/LIBRARY.md, "A program".
 */
#ifndef GNIO_H
#define GNIO_H

#include "gnio_handler.h"
#include "gnio_hist.h"
#include "gnio_pipeline.h"
#include "gnio_pkt.h"
#include "gnio_state.h"
#include "gnio_verdict.h"

/** The version of these headers ("0.1.0"); gnio_version() is the library's. */
#define GNIO_VERSION_STRING "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The version of the library linked.
 * @return "0.1.0" (compare with GNIO_VERSION_STRING, the headers')
 */
const char *gnio_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GNIO_H */
