// The counter-mode loops of aes_neon.cc, by hand: four blocks per iteration with
// the whole S-box in v16..v31, so that it never touches memory. The round itself is
// described in aes_neon.cc; this file schedules it for in-order cores (Cortex-A53:
// every NEON result takes several cycles, so the four blocks' instructions
// alternate and the steps are ordered to keep dependent instructions apart).
//
// Constant time: the S-box is read only by tbl/tbx from registers, round keys and
// data are loaded from addresses that depend on nothing secret, and the only
// branch is the loop count.

	.text
	.arch	armv8-a
	.hidden	armv8_neon_aes_tables	// in aes_neon.cc

	rk	.req	x0	// const uint8_t* round keys, 16 bytes each
	ctr	.req	x1	// uint8_t counter[16]
	in	.req	x2
	out	.req	x3
	quads	.req	x4	// 4-block groups, > 0
	n	.req	w5	// low 32 bits of the counter, native order

	sr	.req	v12	// tbl indices: ShiftRows
	rsr	.req	v13	// ShiftRows, then each column rotated up one row
	c40	.req	v14	// 0x40 in every byte: the S-box index step
	c1b	.req	v15	// 0x1b in every byte: xtime's reduction
	// v0..v3 and v4..v7 hold the four states, taking turns as input and output of
	// a round; v8..v11 are one scratch register per block (and round keys).

.macro	xor	d, s
	eor	\d\().16b, \d\().16b, \s\().16b
.endm

// y = S-box(s) for four blocks; s is destroyed (it becomes the index minus 192).
// The 256-byte S-box is four 64-byte tables: tbl reads indices 0..63, and each tbx
// reads the index minus 64, 128, 192, leaving out-of-range lanes alone.
.macro	sub_bytes	s0, s1, s2, s3, y0, y1, y2, y3
	tbl	\y0\().16b, {v16.16b-v19.16b}, \s0\().16b
	sub	\s0\().16b, \s0\().16b, c40.16b
	tbl	\y1\().16b, {v16.16b-v19.16b}, \s1\().16b
	sub	\s1\().16b, \s1\().16b, c40.16b
	tbl	\y2\().16b, {v16.16b-v19.16b}, \s2\().16b
	sub	\s2\().16b, \s2\().16b, c40.16b
	tbl	\y3\().16b, {v16.16b-v19.16b}, \s3\().16b
	sub	\s3\().16b, \s3\().16b, c40.16b
	tbx	\y0\().16b, {v20.16b-v23.16b}, \s0\().16b
	sub	\s0\().16b, \s0\().16b, c40.16b
	tbx	\y1\().16b, {v20.16b-v23.16b}, \s1\().16b
	sub	\s1\().16b, \s1\().16b, c40.16b
	tbx	\y2\().16b, {v20.16b-v23.16b}, \s2\().16b
	sub	\s2\().16b, \s2\().16b, c40.16b
	tbx	\y3\().16b, {v20.16b-v23.16b}, \s3\().16b
	sub	\s3\().16b, \s3\().16b, c40.16b
	tbx	\y0\().16b, {v24.16b-v27.16b}, \s0\().16b
	sub	\s0\().16b, \s0\().16b, c40.16b
	tbx	\y1\().16b, {v24.16b-v27.16b}, \s1\().16b
	sub	\s1\().16b, \s1\().16b, c40.16b
	tbx	\y2\().16b, {v24.16b-v27.16b}, \s2\().16b
	sub	\s2\().16b, \s2\().16b, c40.16b
	tbx	\y3\().16b, {v24.16b-v27.16b}, \s3\().16b
	sub	\s3\().16b, \s3\().16b, c40.16b
	tbx	\y0\().16b, {v28.16b-v31.16b}, \s0\().16b
	tbx	\y1\().16b, {v28.16b-v31.16b}, \s1\().16b
	tbx	\y2\().16b, {v28.16b-v31.16b}, \s2\().16b
	tbx	\y3\().16b, {v28.16b-v31.16b}, \s3\().16b
.endm

// One full round on four blocks, input in s0..s3, output in y0..y3; its key is at
// [rk, #offset]. MixColumns with u = ShiftRows(y), b = u rotated one row within
// each column and t = u ^ b: out = b ^ key ^ rev32.8h(t) ^ (t + t) ^ (0x1b where
// t's top bit is set), one scratch register per block.
.macro	full_round	s0, s1, s2, s3, y0, y1, y2, y3, offset
	sub_bytes	\s0, \s1, \s2, \s3, \y0, \y1, \y2, \y3
	ldr	q11, [rk, #\offset]		// round key, until block 3's scratch
	tbl	\s0\().16b, {\y0\().16b}, sr.16b	// u
	tbl	\y0\().16b, {\y0\().16b}, rsr.16b	// b
	tbl	\s1\().16b, {\y1\().16b}, sr.16b
	tbl	\y1\().16b, {\y1\().16b}, rsr.16b
	tbl	\s2\().16b, {\y2\().16b}, sr.16b
	tbl	\y2\().16b, {\y2\().16b}, rsr.16b
	tbl	\s3\().16b, {\y3\().16b}, sr.16b
	tbl	\y3\().16b, {\y3\().16b}, rsr.16b
	xor	\s0, \y0				// t = u ^ b
	xor	\s1, \y1
	xor	\s2, \y2
	xor	\s3, \y3
	xor	\y0, v11				// b ^ key
	rev32	v8.8h, \s0\().8h
	xor	\y1, v11
	rev32	v9.8h, \s1\().8h
	xor	\y2, v11
	rev32	v10.8h, \s2\().8h
	xor	\y3, v11
	rev32	v11.8h, \s3\().8h
	xor	\y0, v8					// ^ rev32(t)
	xor	\y1, v9
	xor	\y2, v10
	xor	\y3, v11
	cmlt	v8.16b, \s0\().16b, #0
	add	\s0\().16b, \s0\().16b, \s0\().16b
	cmlt	v9.16b, \s1\().16b, #0
	add	\s1\().16b, \s1\().16b, \s1\().16b
	cmlt	v10.16b, \s2\().16b, #0
	add	\s2\().16b, \s2\().16b, \s2\().16b
	cmlt	v11.16b, \s3\().16b, #0
	add	\s3\().16b, \s3\().16b, \s3\().16b
	and	v8.16b, v8.16b, c1b.16b
	xor	\y0, \s0				// ^ (t + t)
	and	v9.16b, v9.16b, c1b.16b
	xor	\y1, \s1
	and	v10.16b, v10.16b, c1b.16b
	xor	\y2, \s2
	and	v11.16b, v11.16b, c1b.16b
	xor	\y3, \s3
	xor	\y0, v8					// ^ 0x1b where t >= 0x80
	xor	\y1, v9
	xor	\y2, v10
	xor	\y3, v11
.endm

// void NAME(const uint8_t* round_keys, uint8_t counter[16], const uint8_t* in,
//           uint8_t* out, size_t quads);
// out = in ^ AES(counter + 0..3), 4 * quads blocks; counter advanced by 4 * quads
// (the big-endian low 32 bits, wrapping).
.macro	ctr_blocks	name, rounds
	.globl	\name
	.type	\name, %function
	.p2align	6
\name:
	cbz	quads, 9f
	stp	d8, d9, [sp, #-128]!
	stp	d10, d11, [sp, #16]
	stp	d12, d13, [sp, #32]
	stp	d14, d15, [sp, #48]
	// sp + 64: the four counter blocks, rewritten each iteration.
	ld1	{v0.16b}, [ctr]
	add	x6, sp, #64
	st1	{v0.16b}, [x6], #16
	st1	{v0.16b}, [x6], #16
	st1	{v0.16b}, [x6], #16
	st1	{v0.16b}, [x6]
	ldr	n, [ctr, #12]
	rev	n, n
	adrp	x6, armv8_neon_aes_tables
	add	x6, x6, :lo12:armv8_neon_aes_tables
	ld1	{v16.16b-v19.16b}, [x6], #64
	ld1	{v20.16b-v23.16b}, [x6], #64
	ld1	{v24.16b-v27.16b}, [x6], #64
	ld1	{v28.16b-v31.16b}, [x6], #64
	ld1	{sr.16b, rsr.16b}, [x6]
	movi	c40.16b, #0x40
	movi	c1b.16b, #0x1b
	add	x6, sp, #64

	// The first four counter blocks, whitened; each iteration prepares the next.
	add	w7, n, #1
	add	w8, n, #2
	add	w9, n, #3
	rev	w10, n
	rev	w7, w7
	rev	w8, w8
	rev	w9, w9
	str	w10, [sp, #(64 + 12)]
	str	w7, [sp, #(64 + 28)]
	str	w8, [sp, #(64 + 44)]
	str	w9, [sp, #(64 + 60)]
	add	n, n, #4
	ld1	{v0.16b-v3.16b}, [x6]
	ldr	q11, [rk]
	xor	v0, v11
	xor	v1, v11
	xor	v2, v11
	xor	v3, v11

	.p2align	4
.L\name\()_loop:
	// Rounds 1 .. rounds-1 (an odd count: the state ends in v4..v7).
	.set	offset, 16
	.rept	(\rounds - 2) / 2
	full_round	v0, v1, v2, v3, v4, v5, v6, v7, offset
	.set	offset, offset + 16
	full_round	v4, v5, v6, v7, v0, v1, v2, v3, offset
	.set	offset, offset + 16
	.endr
	full_round	v0, v1, v2, v3, v4, v5, v6, v7, offset

	// Final round: no MixColumns. The input blocks wait in v8..v11 and the last
	// round key in c1b's register, which is set again at the end.
	sub_bytes	v4, v5, v6, v7, v0, v1, v2, v3
	ld1	{v8.16b-v11.16b}, [in]
	ldr	q15, [rk, #(16 * \rounds)]
	// Meanwhile the next iteration's counter blocks (read back below).
	add	w7, n, #1
	add	w8, n, #2
	add	w9, n, #3
	rev	w10, n
	rev	w7, w7
	rev	w8, w8
	rev	w9, w9
	str	w10, [sp, #(64 + 12)]
	str	w7, [sp, #(64 + 28)]
	str	w8, [sp, #(64 + 44)]
	str	w9, [sp, #(64 + 60)]
	add	n, n, #4
	tbl	v4.16b, {v0.16b}, sr.16b
	tbl	v5.16b, {v1.16b}, sr.16b
	tbl	v6.16b, {v2.16b}, sr.16b
	tbl	v7.16b, {v3.16b}, sr.16b
	ld1	{v0.16b-v3.16b}, [x6]		// next counter blocks
	xor	v4, v15
	xor	v5, v15
	xor	v6, v15
	xor	v7, v15
	ldr	q15, [rk]			// next round 0 key
	xor	v4, v8
	xor	v5, v9
	xor	v6, v10
	xor	v7, v11
	st1	{v4.16b-v7.16b}, [out]
	xor	v0, v15
	xor	v1, v15
	xor	v2, v15
	xor	v3, v15
	movi	c1b.16b, #0x1b
	add	in, in, #64
	add	out, out, #64
	subs	quads, quads, #1
	b.ne	.L\name\()_loop

	sub	n, n, #4			// the prepared but unused group
	rev	n, n
	str	n, [ctr, #12]
	// Leave no keystream, plaintext or counter behind in registers or on the
	// stack (v12..v31 hold only the S-box and constants; d8..d15 are restored).
	movi	v0.16b, #0
	movi	v1.16b, #0
	movi	v2.16b, #0
	movi	v3.16b, #0
	movi	v4.16b, #0
	movi	v5.16b, #0
	movi	v6.16b, #0
	movi	v7.16b, #0
	movi	v8.16b, #0
	movi	v9.16b, #0
	movi	v10.16b, #0
	movi	v11.16b, #0
	st1	{v0.16b}, [x6], #16
	st1	{v0.16b}, [x6], #16
	st1	{v0.16b}, [x6], #16
	st1	{v0.16b}, [x6]
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #128
9:	ret
	.size	\name, . - \name
.endm

	ctr_blocks	armv8_neon_ctr128_blocks, 10
	ctr_blocks	armv8_neon_ctr192_blocks, 12
	ctr_blocks	armv8_neon_ctr256_blocks, 14

	.section	.note.GNU-stack, "", %progbits
