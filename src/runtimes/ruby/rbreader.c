// SPDX-License-Identifier: MIT
/*
 * CRuby iseq and string reader (src/runtimes/ruby/rbreader.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/ruby/rboffsets.h"
#include "runtimes/ruby/rbreader.h"

#define RB_WIN_MAX 512 /* bytes of an iseq body read at once */
#define RB_POSITIONS_MAX (1u << 20) /* insns_info entries a table may have */

static uint64_t get64(const uint8_t *p, uint32_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t get32(const uint8_t *p, uint32_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static int rd(const struct rbreader_src *s, uint64_t addr, void *buf, size_t len)
{
	/* a NULL, small or kernel-half address is no object */
	if (addr < 4096 || addr >= (1ull << 47) || addr + len < addr)
		return -EFAULT;
	return s->read(s->ctx, addr, buf, len);
}

/* The flags word of heap object v, if it has type `type`. */
static int object(const struct rbreader_src *s, uint64_t v, uint32_t type, uint64_t *flags)
{
	int err;

	/* special constants (Fixnum, Symbol, nil...) have low bits set */
	if (v & 7)
		return -EINVAL;
	if ((err = rd(s, v, flags, sizeof(*flags))))
		return err;
	return (*flags & s->o->t_mask) == type ? 0 : -EINVAL;
}

int rbreader__string(const struct rbreader_src *s, uint64_t v, char *buf, size_t size, int *cut)
{
	const struct rboffsets *o = s->o;
	uint8_t hdr[64];
	uint64_t flags, len, ptr;
	size_t n;
	int err;

	if (!size)
		return -EINVAL;
	buf[0] = 0;
	if ((err = object(s, v, o->t_string, &flags)))
		return err;
	if (o->str_ptr + 8 > sizeof(hdr) || o->str_len + 8 > sizeof(hdr) || o->str_embed >= sizeof(hdr))
		return -EINVAL;
	if ((err = rd(s, v, hdr, sizeof(hdr))))
		return err;
	if (flags & o->str_noembed) {
		len = get64(hdr, o->str_len);
		ptr = get64(hdr, o->str_ptr);
		if (len > (1u << 30))
			return -EINVAL;
		n = len < size - 1 ? len : size - 1;
		if (n && (err = rd(s, ptr, buf, n)))
			return err;
	} else {
		len = (flags >> o->str_embed_shift) & o->str_embed_mask;
		if (o->str_embed + len > sizeof(hdr))
			return -EINVAL;
		n = len < size - 1 ? len : size - 1;
		memcpy(buf, hdr + o->str_embed, n);
	}
	if (n < len && cut)
		*cut = 1;
	buf[n] = 0;
	for (size_t i = 0; i < n; i++) {
		if (!buf[i]) { /* a C string ends at its first NUL */
			n = i;
			break;
		}
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = '?';
	}
	return (int)n;
}

int rbreader__path(const struct rbreader_src *s, uint64_t pathobj, char *buf, size_t size,
		   int *cut)
{
	const struct rboffsets *o = s->o;
	uint8_t hdr[64];
	uint64_t flags, len, first;
	int err;

	if (!object(s, pathobj, o->t_string, &flags))
		return rbreader__string(s, pathobj, buf, size, cut);
	if ((err = object(s, pathobj, o->t_array, &flags)))
		return err;
	if (o->ary_ptr + 8 > sizeof(hdr) || o->ary_len + 8 > sizeof(hdr) ||
	    o->ary_embed + 8 > sizeof(hdr) || (err = rd(s, pathobj, hdr, sizeof(hdr))))
		return err ? err : -EINVAL;
	if (flags & o->ary_embed_flag) {
		len = (flags >> o->ary_embed_shift) & o->ary_embed_mask;
		first = get64(hdr, o->ary_embed);
	} else {
		len = get64(hdr, o->ary_len);
		if (len && (err = rd(s, get64(hdr, o->ary_ptr), &first, sizeof(first))))
			return err;
	}
	if (len < 1)
		return -EINVAL;
	/* [path, realpath]: the path is a string, never another array */
	return rbreader__string(s, first, buf, size, cut);
}

/* Element i of array ary. */
static int ary_elem(const struct rbreader_src *s, uint64_t ary, uint64_t i, uint64_t *out)
{
	const struct rboffsets *o = s->o;
	uint8_t hdr[64];
	uint64_t flags, len;
	int err;

	if ((err = object(s, ary, o->t_array, &flags)))
		return err;
	if (o->ary_ptr + 8 > sizeof(hdr) || o->ary_len + 8 > sizeof(hdr) || o->ary_embed >= sizeof(hdr))
		return -EINVAL;
	if ((err = rd(s, ary, hdr, sizeof(hdr))))
		return err;
	if (flags & o->ary_embed_flag) {
		len = (flags >> o->ary_embed_shift) & o->ary_embed_mask;
		if (i >= len || o->ary_embed + (i + 1) * 8 > sizeof(hdr))
			return -EINVAL;
		*out = get64(hdr, o->ary_embed + (uint32_t)i * 8);
		return 0;
	}
	len = get64(hdr, o->ary_len);
	if (i >= len || len > (1u << 30))
		return -EINVAL;
	return rd(s, get64(hdr, o->ary_ptr) + i * 8, out, sizeof(*out));
}

int rbreader__id_name(const struct rbreader_src *s, uint64_t symbols, uint64_t id, char *buf,
		      size_t size, int *cut)
{
	const struct rboffsets *o = s->o;
	uint64_t serial, ids, chunk, str;
	uint32_t last;
	int err;

	if (size)
		buf[0] = 0;
	if (!symbols || !o->id_entry_unit || !o->id_entry_size)
		return -ENOENT;
	if ((err = rd(s, symbols + o->sym_last_id, &last, sizeof(last))) ||
	    (err = rd(s, symbols + o->sym_ids, &ids, sizeof(ids))))
		return err;
	serial = id > o->last_op_id ? id >> o->id_scope_shift : id;
	if (!serial || serial > last)
		return -EINVAL;
	if ((err = ary_elem(s, ids, serial / o->id_entry_unit, &chunk)) ||
	    (err = ary_elem(s, chunk, (serial % o->id_entry_unit) * o->id_entry_size, &str)))
		return err;
	return rbreader__string(s, str, buf, size, cut);
}

int rbreader__cfunc(const struct rbreader_src *s, uint64_t symbols, uint64_t me, char *buf,
		    size_t size, int *cut)
{
	const struct rboffsets *o = s->o;
	uint64_t flags, id;
	int err;

	if (size)
		buf[0] = 0;
	if ((err = object(s, me, o->t_imemo, &flags)))
		return err;
	if (((flags >> o->fl_ushift) & o->imemo_mask) != o->imemo_ment)
		return -EINVAL;
	if ((err = rd(s, me + o->me_called_id, &id, sizeof(id))))
		return err;
	return rbreader__id_name(s, symbols, id, buf, size, cut);
}

/* The value of class klass's ivar `name` (__classpath__, __attached__):
 * its ivar table's entries, keyed by ID, looked up by the ID's name. */
static int class_ivar(const struct rbreader_src *s, uint64_t symbols, uint64_t klass,
		      const char *name, uint64_t *out)
{
	const struct rboffsets *o = s->o;
	uint8_t tbl[64], ent[RBREADER_IVARS_MAX * 32];
	uint64_t ext, iv, start, bound, n;
	char key[64];
	int err;

	if (o->st_entries + 8 > sizeof(tbl) || o->st_entries_start + 8 > sizeof(tbl) ||
	    o->st_entries_bound + 8 > sizeof(tbl) || !o->st_entry_size || o->st_entry_size > 32 ||
	    o->st_entry_hash + 8 > o->st_entry_size || o->st_entry_key + 8 > o->st_entry_size ||
	    o->st_entry_record + 8 > o->st_entry_size)
		return -EINVAL;
	if ((err = rd(s, klass + o->class_ext, &ext, sizeof(ext))) ||
	    (err = rd(s, ext + o->ext_iv_tbl, &iv, sizeof(iv))))
		return err;
	if (!iv)
		return -ENOENT; /* no ivars at all */
	if ((err = rd(s, iv, tbl, o->st_entries + 8)))
		return err;
	start = get64(tbl, o->st_entries_start);
	bound = get64(tbl, o->st_entries_bound);
	if (bound < start || start > (1u << 30))
		return -EINVAL;
	/* (a class with more ivars than this is named without its class) */
	n = bound - start < RBREADER_IVARS_MAX ? bound - start : RBREADER_IVARS_MAX;
	if (!n)
		return -ENOENT;
	if ((err = rd(s, get64(tbl, o->st_entries) + start * o->st_entry_size, ent,
		      n * o->st_entry_size)))
		return err;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *e = ent + i * o->st_entry_size;
		int cut = 0;

		if (get64(e, o->st_entry_hash) == ~0ull) /* deleted */
			continue;
		if (rbreader__id_name(s, symbols, get64(e, o->st_entry_key), key, sizeof(key),
				      &cut) < 0 || cut || strcmp(key, name))
			continue;
		*out = get64(e, o->st_entry_record);
		return 0;
	}
	return -ENOENT;
}

/* The flags of v if it is a class or a module. */
static int class_flags(const struct rbreader_src *s, uint64_t v, uint64_t *flags)
{
	uint32_t t;
	int err;

	if (v & 7)
		return -EINVAL;
	if ((err = rd(s, v, flags, sizeof(*flags))))
		return err;
	t = (uint32_t)(*flags & s->o->t_mask);
	return t == s->o->t_class || t == s->o->t_module ? 0 : -EINVAL;
}

int rbreader__class_path(const struct rbreader_src *s, uint64_t symbols, uint64_t me, char *buf,
			 size_t size, int *singleton, int *cut)
{
	const struct rboffsets *o = s->o;
	uint64_t flags, klass, path;
	int err;

	if (!size)
		return -EINVAL;
	buf[0] = 0;
	*singleton = 0;
	if ((err = object(s, me, o->t_imemo, &flags)))
		return err;
	if (((flags >> o->fl_ushift) & o->imemo_mask) != o->imemo_ment)
		return -EINVAL;
	if ((err = rd(s, me + o->me_defined_class, &klass, sizeof(klass))))
		return err;
	if (!object(s, klass, o->t_iclass, &flags) &&
	    (err = rd(s, klass + o->basic_klass, &klass, sizeof(klass))))
		return err;
	if ((err = class_flags(s, klass, &flags)))
		return err;
	if (flags & o->fl_singleton) {
		*singleton = 1;
		if ((err = class_ivar(s, symbols, klass, "__attached__", &klass)))
			return err;
		/* a singleton of an object, not of a class: rb_profile_frame_classpath
		 * prints the object ("#<Foo:0x...>"), which is no name to keep */
		if (class_flags(s, klass, &flags))
			return -ENOENT;
	}
	if ((err = class_ivar(s, symbols, klass, "__classpath__", &path)))
		return err;
	return rbreader__string(s, path, buf, size, cut);
}

size_t rbreader__full_label(const char *label, const char *base_label, const char *cls,
			    int singleton, char *out, size_t size)
{
	size_t ll = strlen(label), bl = strlen(base_label);
	int n;

	if (!size)
		return 0;
	if (!*cls || !bl || bl > ll || strcmp(label + ll - bl, base_label))
		n = snprintf(out, size, "%s", label);
	else
		n = snprintf(out, size, "%.*s%s%s%s", (int)(ll - bl), label, cls,
			     singleton ? "." : "#", base_label);
	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

/* succ_index_lookup (iseq.c): the insns_info rank of position x. */
static int succ_lookup(const struct rbreader_src *s, uint64_t table, uint32_t max_pos, uint32_t x)
{
	const struct rboffsets *o = s->o;
	uint32_t imm = o->succ_imm_size;
	uint64_t w;
	int err;

	if (!imm || imm > 128 || imm % 9)
		return -EINVAL;
	if (x < imm) {
		uint32_t imm_size = (max_pos < imm ? max_pos + 8 : imm) / 9;

		if (x / 9 >= imm_size)
			return -EINVAL;
		if ((err = rd(s, table + (x / 9) * 8, &w, sizeof(w))))
			return err;
		return (int)((w >> ((x % 9) * 7)) & 0x7f);
	}
	uint32_t succ_size = (max_pos - imm + 511) / 512, bi = (x - imm) / 512;
	uint32_t bit = (x - imm) % 512, sb = bit / 64;
	uint8_t blk[128];
	uint64_t small, bits;
	int small_rank;

	if (max_pos < imm || bi >= succ_size || o->succ_block_size > sizeof(blk) ||
	    o->succ_block_bits + 64 > o->succ_block_size || o->succ_block_small + 8 > o->succ_block_size ||
	    o->succ_block_rank + 4 > o->succ_block_size)
		return -EINVAL;
	if ((err = rd(s, table + o->succ_part + (uint64_t)bi * o->succ_block_size, blk,
		      o->succ_block_size)))
		return err;
	small = get64(blk, o->succ_block_small);
	small_rank = sb == 0 ? 0 : (int)((small >> ((sb - 1) * 9)) & 0x1ff);
	bits = get64(blk, o->succ_block_bits + sb * 8);
	return (int)get32(blk, o->succ_block_rank) + small_rank +
	       __builtin_popcountll(bits << (63 - bit % 64));
}

/* The last entry whose position is <= pos (get_insn_info_binary_search). */
static int positions_lookup(const struct rbreader_src *s, uint64_t positions, uint32_t size,
			    uint32_t pos)
{
	uint32_t lo = 0, hi = size, v;
	int err;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if ((err = rd(s, positions + (uint64_t)mid * 4, &v, sizeof(v))))
			return err;
		if (v <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return (int)lo + 1; /* a rank, as succ_lookup's */
}

int rbreader__line(const struct rbreader_src *s, const uint8_t *win, uint32_t pos)
{
	const struct rboffsets *o = s->o;
	uint32_t size = get32(win, o->insns_size), iseq_size = get32(win, o->body_iseq_size);
	uint64_t entries = get64(win, o->insns_body), table = get64(win, o->insns_succ);
	uint64_t positions = get64(win, o->insns_positions);
	int32_t line;
	int rank, err;

	if (size == 0)
		return 0;
	if (size > RB_POSITIONS_MAX || size > iseq_size || pos >= iseq_size ||
	    o->entry_line + 4 > o->entry_size)
		return -EINVAL;
	if (size == 1)
		rank = 1;
	else if (o->lines == RBOFF_LINES_SUCC && table)
		rank = succ_lookup(s, table, iseq_size, pos);
	else if (positions)
		rank = positions_lookup(s, positions, size, pos);
	else
		return -EINVAL;
	if (rank < 0)
		return rank;
	if (rank < 1 || (uint32_t)rank > size)
		return -EINVAL;
	if ((err = rd(s, entries + (uint64_t)(rank - 1) * o->entry_size + o->entry_line, &line,
		      sizeof(line))))
		return err;
	return line > 0 ? line : 0;
}

int rbreader__iseq(const struct rbreader_src *s, uint64_t iseq, int32_t instr,
		   struct rbiseq_name *out)
{
	const struct rboffsets *o = s->o;
	uint8_t win[RB_WIN_MAX];
	uint64_t flags, body, first;
	uint32_t type;
	int err, line;

	memset(out, 0, sizeof(*out));
	if (o->body_window > sizeof(win) || o->body_window < 8 ||
	    o->loc_first_lineno + 8 > o->body_window || o->insns_succ + 8 > o->body_window)
		return -EINVAL;
	if ((err = object(s, iseq, o->t_imemo, &flags)))
		return err;
	if (((flags >> o->fl_ushift) & o->imemo_mask) != o->imemo_iseq)
		return -EINVAL;
	if ((err = rd(s, iseq + o->iseq_body, &body, sizeof(body))) ||
	    (err = rd(s, body, win, o->body_window)))
		return err;
	type = get32(win, o->body_type);
	if (type > 16 || get32(win, o->body_iseq_size) > RBREADER_ISEQ_MAX)
		return -EINVAL;
	first = get64(win, o->loc_first_lineno);
	/* a Fixnum: 2n + 1 */
	if (!(first & 1) || (int64_t)first < 0 || first >> 32)
		return -EINVAL;
	out->first_lineno = (int32_t)(first >> 1);
	if ((err = rbreader__string(s, get64(win, o->loc_label), out->label, sizeof(out->label),
				    &out->truncated)) < 0)
		return err;
	if ((err = rbreader__string(s, get64(win, o->loc_base_label), out->base_label,
				    sizeof(out->base_label), &out->truncated)) < 0)
		return err;
	if ((err = rbreader__path(s, get64(win, o->loc_pathobj), out->path, sizeof(out->path),
			   &out->truncated)) < 0)
		return err;
	if (instr < 0) {
		out->line = out->first_lineno;
		return 0;
	}
	/* the pc points past the instruction running (calc_pos) */
	line = rbreader__line(s, win, instr ? (uint32_t)instr - 1 : 0);
	out->line = line > 0 ? line : 0;
	return 0;
}
