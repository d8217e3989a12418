/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * meshplan: what the library exports.
 *
 * libmeshplan is built with -fvisibility=hidden: a function is part of the
 * API, and callable from outside the library, only when its declaration in
 * an installed header carries MESH_API.  tests/check-abi compares the
 * shared library's exports with those declarations.
 */
#ifndef MESHPLAN_API_H
#define MESHPLAN_API_H

#if defined(__GNUC__) || defined(__clang__)
#define MESH_API __attribute__((visibility("default")))
#else
#define MESH_API
#endif

#endif
