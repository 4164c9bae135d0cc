// The GHASH group loop of ghash_neon.cc, by hand: eight blocks per iteration
// multiplied by H^8..H^1, summed, and reduced once. The method and the table layout
// (GhashPower) are described in ghash_neon.cc and ghash_neon.h; this file only
// schedules it for in-order cores (Cortex-A53: every NEON result takes several
// cycles, so independent multiplies and XORs alternate).
//
// One iteration:
//   lo/hi pass  for each block: a = rbit(block) (^ x for block 0), a1..a3 = a with
//               each half rotated by 1..3 bytes; 16 pmull/pmull2 into the class sums
//               of a0*h0 (lo) and a1*h1 (hi).
//   place       fix up the classes: lo and hi become two 128-bit products.
//   mid pass    for each block: m = a0 ^ a1 in both halves, m1..m3 rotated; 8
//               multiplies into the class sums of (a0 ^ a1)(h0 ^ h1).
//   finish      place mid, Karatsuba, reduce modulo x^128 + x^7 + x^2 + x + 1.
//
// Constant time: no load address and no branch depends on data, H or x; only the
// group count steers the loop.

	.text
	.arch	armv8-a

	// Arguments.
	key	.req	x0	// const GhashKey*: 8 powers of 128 bytes, H^8 first
	xptr	.req	x1	// uint8_t x[16]
	in	.req	x2	// const uint8_t*, 128 bytes per group
	groups	.req	x3	// size_t, > 0
	// Addresses (ld1 takes no offset, and pointer arithmetic between NEON
	// instructions stalls an in-order pipeline, so they are all set up once).
	in16	.req	x4	// in + 16
	in64	.req	x5	// in + 64
	crot	.req	x6	// .Lghash_constants: rot1..rot3
	cmask	.req	x7	// the wrap masks
	cred	.req	x8	// even/odd split and 0x87
	// x9..x16: t[1] of powers[0..7]; x17, x19..x25: t[5] of powers[0..7].

	// Live through the loop.
	acc	.req	v0	// x, in rbit form
	rot1	.req	v1	// tbl indices: rotate each half down 1, 2, 3 bytes
	rot2	.req	v2
	rot3	.req	v3

	// lo/hi pass. Data arrives four blocks at a time in v28..v31.
	ta	.req	v4	// t[0] of even blocks
	tb	.req	v27	// t[0] of odd blocks
	t1	.req	v5	// t[1..4], one ld1
	t2	.req	v6
	t3	.req	v7
	t4	.req	v8
	a	.req	v9
	a1	.req	v10
	a2	.req	v11
	a3	.req	v12
	pa	.req	v13	// products on their way to a class sum
	pb	.req	v14
	pc	.req	v15
	pd	.req	v16
	lo0	.req	v17
	lo1	.req	v18
	lo2	.req	v19
	lo3	.req	v20
	lo4	.req	v21
	hi0	.req	v22
	hi1	.req	v23
	hi2	.req	v24
	hi3	.req	v25
	hi4	.req	v26

	// mid pass: the mid sums take the lo sums' registers; the placed lo and hi
	// products wait in v23 and v22. Two register sets alternate between blocks,
	// and data arrives in v1..v3 (blocks 1..3) and v0..v3 (blocks 4..7).
	md0	.req	v17
	md1	.req	v18
	md2	.req	v19
	md3	.req	v20
	md4	.req	v21
	md3b	.req	v31	// a second sum for class 3, against back-to-back updates
	phi	.req	v22
	plo	.req	v23

// x = x ^ y, on .16b
.macro	xor	d, s
	eor	\d\().16b, \d\().16b, \s\().16b
.endm

// --- lo/hi pass -----------------------------------------------------------------
//
// One block: `a` is ready (rbit, and x folded in for block 0), t0 holds t[0] and
// t1..t4 hold t[1..4] of its power. When there is a next block, `next` is the
// address of its t[1] (its t[0] goes to register q\nt0) and `data` holds its
// block. `batch` loads blocks 4..7 into v28..v31. The last four class sums of a
// block are added at the start of the next one (`first` = 0) or by lohi_finish.
.macro	lohi_block	t0, nt0, next, data, batch=0, first=0
.if !\first
	xor	lo2, pa				// previous block's rot2(a) products
	xor	hi2, pb
.endif
	pmull	pa.8h, a.8b, \t0\().8b		// lo class 0: a0 * h0
	pmull2	pb.8h, a.16b, \t0\().16b	// hi class 0: a1 * h1
.if !\first
	xor	lo3, pc				// previous block's rot3(a) products
	xor	hi3, pd
.endif
	pmull	pc.8h, a.8b, t1.8b		// class 1: a * rot1(h)
	pmull2	pd.8h, a.16b, t1.16b
	tbl	a1.16b, {a.16b}, rot1.16b
	tbl	a2.16b, {a.16b}, rot2.16b
	tbl	a3.16b, {a.16b}, rot3.16b
.if \batch
	ld1	{v28.16b-v31.16b}, [in64]
.endif
	xor	lo0, pa
	pmull	pa.8h, a.8b, t2.8b		// class 2
	xor	hi0, pb
	pmull2	pb.8h, a.16b, t2.16b
	xor	lo1, pc
	pmull	pc.8h, a.8b, t3.8b		// class 3
	xor	hi1, pd
	pmull2	pd.8h, a.16b, t3.16b
	xor	lo2, pa
	pmull	pa.8h, a.8b, t4.8b		// class 4
	xor	hi2, pb
	pmull2	pb.8h, a.16b, t4.16b
.ifnb \next
	ldur	q\nt0, [\next, #-16]
	ld1	{t1.16b-t4.16b}, [\next]
.endif
	xor	lo3, pc
	pmull	pc.8h, a1.8b, \t0\().8b		// class 1: rot1(a) * h
	xor	hi3, pd
	pmull2	pd.8h, a1.16b, \t0\().16b
	xor	lo4, pa
	pmull	pa.8h, a2.8b, \t0\().8b		// class 2: rot2(a) * h
	xor	hi4, pb
	pmull2	pb.8h, a2.16b, \t0\().16b
.ifnb \data
	rbit	a.16b, \data\().16b
.endif
	xor	lo1, pc
	pmull	pc.8h, a3.8b, \t0\().8b		// class 3: rot3(a) * h
	xor	hi1, pd
	pmull2	pd.8h, a3.16b, \t0\().16b
.endm

.macro	lohi_finish
	xor	lo2, pa
	xor	hi2, pb
	xor	lo3, pc
	xor	hi3, pd
.endm

// --- mid pass -------------------------------------------------------------------
//
// One block with m (a0 ^ a1 in both halves) and u0..u2 (t[5..7]) ready; its
// rotations go to m1..m3. When there is a next block, starts its m (nm) from its
// rbit'ed data in `na` and loads its t[5..7] from `next` into nu0..nu2; `nd` is
// the raw data of the block after that, to be rbit'ed into `nna`. `batch` loads
// blocks 4..7 into v0..v3.
.macro	mid_block	m, m1, m2, m3, u0, u1, u2, na, nm, nu0, nu1, nu2, next, nd, nna, batch=0
	ext	\m1\().16b, \m\().16b, \m\().16b, #1
	ext	\m2\().16b, \m\().16b, \m\().16b, #2
	ext	\m3\().16b, \m\().16b, \m\().16b, #3
	pmull	pa.8h, \m\().8b, \u0\().8b	// class 0: m * hm
	pmull2	pb.8h, \m\().16b, \u0\().16b	// class 4: m * rot4(hm)
	pmull	pc.8h, \m\().8b, \u1\().8b	// class 1: m * rot1(hm)
	pmull2	pd.8h, \m\().16b, \u1\().16b	// class 2: m * rot2(hm)
.ifnb \next
	ext	\nm\().16b, \na\().16b, \na\().16b, #8
	ld1	{\nu0\().16b-\nu2\().16b}, [\next]
.endif
.if \batch
	ld1	{v0.16b-v3.16b}, [in64]
.endif
	xor	md0, pa
	pmull	pa.8h, \m\().8b, \u2\().8b	// class 3: m * rot3(hm)
	xor	md4, pb
	pmull2	pb.8h, \m1\().16b, \u2\().16b	// class 1: rot1(m) * hm
	xor	md1, pc
	pmull	pc.8h, \m2\().8b, \u0\().8b	// class 2: rot2(m) * hm
	xor	md2, pd
	pmull	pd.8h, \m3\().8b, \u0\().8b	// class 3: rot3(m) * hm, into md3b
.ifnb \next
	xor	\nm, \na
.endif
	xor	md3, pa
.ifnb \nd
	rbit	\nna\().16b, \nd\().16b
.endif
	xor	md1, pb
	xor	md2, pc
	xor	md3b, pd
.endm

// --- placing the class sums -----------------------------------------------------
//
// The class sums of two products (z0..z4 and y0..y4) placed and summed, side by
// side: class r's wrapped lanes (mask k_r) move down 64 bits, that is into the
// other half, then the whole class moves up r bytes (its top r bytes are empty by
// then, so ext's rotation is a shift). Results in z0 and y0; w*, v* scratch.
.macro	place2	z0, z1, z2, z3, z4, y0, y1, y2, y3, y4, w1, w2, w3, w4, v1, v2, v3, v4, k1, k2, k3, k4
	and	\w1\().16b, \z1\().16b, \k1\().16b
	and	\v1\().16b, \y1\().16b, \k1\().16b
	and	\w2\().16b, \z2\().16b, \k2\().16b
	and	\v2\().16b, \y2\().16b, \k2\().16b
	and	\w3\().16b, \z3\().16b, \k3\().16b
	and	\v3\().16b, \y3\().16b, \k3\().16b
	xor	\z1, \w1
	xor	\y1, \v1
	ext	\w1\().16b, \w1\().16b, \w1\().16b, #8
	ext	\v1\().16b, \v1\().16b, \v1\().16b, #8
	xor	\z2, \w2
	xor	\y2, \v2
	ext	\w2\().16b, \w2\().16b, \w2\().16b, #8
	ext	\v2\().16b, \v2\().16b, \v2\().16b, #8
	and	\w4\().16b, \z4\().16b, \k4\().16b
	and	\v4\().16b, \y4\().16b, \k4\().16b
	xor	\z3, \w3
	xor	\y3, \v3
	ext	\w3\().16b, \w3\().16b, \w3\().16b, #8
	ext	\v3\().16b, \v3\().16b, \v3\().16b, #8
	xor	\z1, \w1
	xor	\y1, \v1
	xor	\z2, \w2
	xor	\y2, \v2
	xor	\z4, \w4
	xor	\y4, \v4
	ext	\w4\().16b, \w4\().16b, \w4\().16b, #8
	ext	\v4\().16b, \v4\().16b, \v4\().16b, #8
	xor	\z3, \w3
	xor	\y3, \v3
	ext	\z1\().16b, \z1\().16b, \z1\().16b, #15
	ext	\y1\().16b, \y1\().16b, \y1\().16b, #15
	ext	\z2\().16b, \z2\().16b, \z2\().16b, #14
	ext	\y2\().16b, \y2\().16b, \y2\().16b, #14
	xor	\z4, \w4
	xor	\y4, \v4
	ext	\z3\().16b, \z3\().16b, \z3\().16b, #13
	ext	\y3\().16b, \y3\().16b, \y3\().16b, #13
	xor	\z0, \z1
	xor	\y0, \y1
	ext	\z4\().16b, \z4\().16b, \z4\().16b, #12
	ext	\y4\().16b, \y4\().16b, \y4\().16b, #12
	xor	\z2, \z3
	xor	\y2, \y3
	xor	\z0, \z4
	xor	\y0, \y4
	xor	\z0, \z2
	xor	\y0, \y2
.endm

// void armv8_neon_ghash_blocks(const GhashKey* key, uint8_t x[16],
//                              const uint8_t* in, size_t groups);
	.globl	armv8_neon_ghash_blocks
	.type	armv8_neon_ghash_blocks, %function
	.p2align	6
armv8_neon_ghash_blocks:
	cbz	groups, 9f
	stp	d8, d9, [sp, #-128]!
	stp	d10, d11, [sp, #16]
	stp	d12, d13, [sp, #32]
	stp	d14, d15, [sp, #48]
	stp	x19, x20, [sp, #64]
	stp	x21, x22, [sp, #80]
	stp	x23, x24, [sp, #96]
	str	x25, [sp, #112]
	adrp	crot, .Lghash_constants
	add	crot, crot, :lo12:.Lghash_constants
	add	cmask, crot, #48
	add	cred, crot, #112
	add	x9, key, #16
	add	x10, key, #(16 + 128)
	add	x11, key, #(16 + 256)
	add	x12, key, #(16 + 384)
	add	x13, key, #(16 + 512)
	add	x14, key, #(16 + 640)
	add	x15, key, #(16 + 768)
	add	x16, key, #(16 + 896)
	add	x17, key, #80
	add	x19, key, #(80 + 128)
	add	x20, key, #(80 + 256)
	add	x21, key, #(80 + 384)
	add	x22, key, #(80 + 512)
	add	x23, key, #(80 + 640)
	add	x24, key, #(80 + 768)
	add	x25, key, #(80 + 896)
	add	in16, in, #16
	add	in64, in, #64
	ld1	{acc.16b}, [xptr]
	rbit	acc.16b, acc.16b

	.p2align	4
.Lghash_group:
	// lo/hi pass. Blocks 0..3, the rotations, block 0's table; x goes into block 0.
	ld1	{v28.16b-v31.16b}, [in]
	ld1	{rot1.16b-rot3.16b}, [crot]
	ldur	q4, [x9, #-16]
	ld1	{t1.16b-t4.16b}, [x9]
	movi	lo0.16b, #0
	movi	hi0.16b, #0
	movi	lo1.16b, #0
	movi	hi1.16b, #0
	movi	lo2.16b, #0
	movi	hi2.16b, #0
	rbit	a.16b, v28.16b
	movi	lo3.16b, #0
	movi	hi3.16b, #0
	movi	lo4.16b, #0
	movi	hi4.16b, #0
	xor	a, acc
	lohi_block	ta, 27, x10, v29, 0, 1
	lohi_block	tb, 4, x11, v30
	lohi_block	ta, 27, x12, v31
	lohi_block	tb, 4, x13, v28, 1
	lohi_block	ta, 27, x14, v29
	lohi_block	tb, 4, x15, v30
	lohi_block	ta, 27, x16, v31
	lohi_block	tb, 4
	lohi_finish

	// Place lo and hi (masks in v28..v31), while the mid pass's first two blocks
	// are prepared: data of blocks 0..3, t[5..7] of powers[0].
	ld1	{v28.16b-v31.16b}, [cmask]
	ld1	{v1.16b-v3.16b}, [in16]		// blocks 1..3
	ld1	{v5.16b-v7.16b}, [x17]
	ldr	q9, [in]			// block 0
	rbit	v27.16b, v1.16b
	place2	lo0, lo1, lo2, lo3, lo4, hi0, hi1, hi2, hi3, hi4, v4, v8, v10, v11, v12, v13, v14, v15, v28, v29, v30, v31
	rbit	v9.16b, v9.16b
	mov	plo.16b, lo0.16b		// phi is hi0 already
	xor	v9, acc				// block 0 gets x
	movi	md0.16b, #0
	ext	v12.16b, v9.16b, v9.16b, #8
	movi	md1.16b, #0
	movi	md2.16b, #0
	xor	v9, v12				// m of block 0
	movi	md3.16b, #0
	movi	md3b.16b, #0
	movi	md4.16b, #0

	// mid pass: sets (v9-v12 m, v5-v7 u) and (v25,v26,v27,v4 m, v28-v30 u);
	// rbit'ed data alternates between v8 and v24 (block 1's is in v27).
	mid_block	v9, v10, v11, v12, v5, v6, v7, v27, v25, v28, v29, v30, x19, v2, v8
	mid_block	v25, v26, v27, v4, v28, v29, v30, v8, v9, v5, v6, v7, x20, v3, v24
	mid_block	v9, v10, v11, v12, v5, v6, v7, v24, v25, v28, v29, v30, x21, v0, v8, 1
	mid_block	v25, v26, v27, v4, v28, v29, v30, v8, v9, v5, v6, v7, x22, v1, v24
	mid_block	v9, v10, v11, v12, v5, v6, v7, v24, v25, v28, v29, v30, x23, v2, v8
	mid_block	v25, v26, v27, v4, v28, v29, v30, v8, v9, v5, v6, v7, x24, v3, v24
	mid_block	v9, v10, v11, v12, v5, v6, v7, v24, v25, v28, v29, v30, x25
	mid_block	v25, v26, v27, v4, v28, v29, v30

	// Finish: place mid, Karatsuba, reduce. With lo and hi placed, the 256-bit
	// product is lo + mid' x^64 + hi x^128, mid' = mid ^ lo ^ hi, so
	//   low  = lo ^ (k << 64) ^ (mid << 64),  high = hi ^ (k >> 64) ^ (mid >> 64)
	// with k = lo ^ hi; reduction is linear, so the part of the result that does
	// not need mid, T = lo ^ (k << 64) ^ reduce(hi ^ (k >> 64)), is computed while
	// mid is being placed, and only mid's own share follows it:
	//   x = T ^ (mid << 64) ^ reduce(mid >> 64).
	// reduce(v) = v * x^128 = v * 0x87 (x^7 + x^2 + x + 1): even bytes' products
	// land in place, odd bytes' one byte up, and for a full v the top byte that
	// spills past x^127 goes round once more; mid >> 64 has no such byte.
	xor	md3, md3b
	ld1	{v28.16b-v31.16b}, [cmask]
	ld1	{v24.16b-v26.16b}, [cred]	// even/odd split, 0x87, split of the top half
	movi	v27.16b, #0
	and	v4.16b, md1.16b, v28.16b
	and	v5.16b, md2.16b, v29.16b
	eor	v8.16b, plo.16b, phi.16b	// k
	and	v6.16b, md3.16b, v30.16b
	and	v7.16b, md4.16b, v31.16b
	xor	md1, v4
	xor	md2, v5
	ext	v9.16b, v27.16b, v8.16b, #8	// k << 64
	ext	v10.16b, v8.16b, v27.16b, #8	// k >> 64
	ext	v4.16b, v4.16b, v4.16b, #8
	ext	v5.16b, v5.16b, v5.16b, #8
	xor	md3, v6
	xor	md4, v7
	xor	v9, plo				// lo ^ (k << 64)
	xor	v10, phi			// hi ^ (k >> 64)
	ext	v6.16b, v6.16b, v6.16b, #8
	ext	v7.16b, v7.16b, v7.16b, #8
	xor	md1, v4
	xor	md2, v5
	tbl	v11.16b, {v10.16b}, v24.16b
	xor	md3, v6
	xor	md4, v7
	ext	md1.16b, md1.16b, md1.16b, #15
	ext	md2.16b, md2.16b, md2.16b, #14
	pmull	v12.8h, v11.8b, v25.8b		// even bytes * 0x87
	pmull2	v13.8h, v11.16b, v25.16b	// odd bytes * 0x87
	ext	md3.16b, md3.16b, md3.16b, #13
	ext	md4.16b, md4.16b, md4.16b, #12
	xor	md0, md1
	xor	md2, md3
	xor	v9, v12
	ext	v14.16b, v27.16b, v13.16b, #15	// odd part << 8
	ext	v15.16b, v13.16b, v27.16b, #15	// its top byte, at x^0
	xor	md0, md4
	xor	md0, md2			// mid, placed
	pmull	v16.8h, v15.8b, v25.8b
	xor	v9, v14
	tbl	v11.16b, {md0.16b}, v26.16b	// even, odd bytes of mid >> 64
	ext	v12.16b, v27.16b, md0.16b, #8	// mid << 64
	xor	v9, v16				// T
	pmull	v13.8h, v11.8b, v25.8b
	pmull2	v14.8h, v11.16b, v25.16b
	xor	v9, v12
	xor	v9, v13
	ext	v14.16b, v27.16b, v14.16b, #15
	add	in, in, #128
	add	in16, in, #16
	add	in64, in, #64
	subs	groups, groups, #1
	eor	acc.16b, v9.16b, v14.16b
	b.ne	.Lghash_group

	rbit	acc.16b, acc.16b
	st1	{acc.16b}, [xptr]
	// Leave nothing of x, H or the data in the vector registers (d8..d15 are
	// restored below).
	.irp	r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
	movi	v\r\().16b, #0
	.endr
	ldp	x19, x20, [sp, #64]
	ldp	x21, x22, [sp, #80]
	ldp	x23, x24, [sp, #96]
	ldr	x25, [sp, #112]
	ldp	d10, d11, [sp, #16]
	ldp	d12, d13, [sp, #32]
	ldp	d14, d15, [sp, #48]
	ldp	d8, d9, [sp], #128
9:	ret
	.size	armv8_neon_ghash_blocks, . - armv8_neon_ghash_blocks

	.section	.rodata
	.p2align	4
.Lghash_constants:
	// rot1, rot2, rot3: each 8-byte half rotated down by 1, 2, 3 bytes.
	.byte	1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8
	.byte	2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9
	.byte	3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10
	// Wrapped lanes of classes 1..4: the top 2, 4, 6, 8 bytes.
	.byte	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	.byte	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff
	.byte	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	.byte	0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	// Even bytes, then odd bytes; 0x87 (x^7 + x^2 + x + 1) in every byte; the even
	// and then the odd bytes of the top half, each padded with zeros (index 0xff).
	.byte	0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15
	.fill	16, 1, 0x87
	.byte	8, 10, 12, 14, 0xff, 0xff, 0xff, 0xff, 9, 11, 13, 15, 0xff, 0xff, 0xff, 0xff

	.section	.note.GNU-stack, "", %progbits
