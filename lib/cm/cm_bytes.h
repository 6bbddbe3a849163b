/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef QPIO_CM_BYTES_H
#define QPIO_CM_BYTES_H
/*
 * Big-endian fields at any alignment, for lib/cm's wire formats (the
 * soft exchange's, cm_wire.c, and the IB CM's MADs, cm_mad.c).
 */
#include <stdint.h>

static inline uint16_t
cm_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
cm_rd24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t
cm_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | cm_rd24(p + 1);
}

static inline uint64_t
cm_rd64(const uint8_t *p)
{
	return (uint64_t)cm_rd32(p) << 32 | cm_rd32(p + 4);
}

static inline void
cm_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
cm_wr24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void
cm_wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	cm_wr24(p + 1, v);
}

static inline void
cm_wr64(uint8_t *p, uint64_t v)
{
	cm_wr32(p, (uint32_t)(v >> 32));
	cm_wr32(p + 4, (uint32_t)v);
}

#endif
