/*
 * swift_demangle.c — the Swift demangler's entry points, its per-call arena
 * and the node tree's primitives. The grammar lives in
 * swift_demangle_parse*.c, the printing in swift_demangle_print*.c; see
 * swift_demangle.h for the contract.
 */
#include "symbolizer/swift_demangle.h"
#include "symbolizer/swift_demangle_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct sw_block {
	sw_block *next;
	size_t size;
};

/* Names longer than this are not symbols a frame shows; refusing them keeps
 * the arena budget (proportional to the length) small. */
#define SW_MAX_INPUT   65536
#define SW_FIRST_BLOCK 16384

/* sw_alloc()'s slow path: a new block, within the budget. */
void *sw_alloc_block(sw_arena *a, size_t n)
{
	size_t size = a->blocks ? a->blocks->size * 2 : SW_FIRST_BLOCK;
	if (size < n + sizeof(sw_block))
		size = n + sizeof(sw_block) + SW_FIRST_BLOCK;
	if (size > a->limit - a->used)
		size = a->limit - a->used;
	if (size < n + sizeof(sw_block))
		return NULL;
	sw_block *b = malloc(size);
	if (!b)
		return NULL;
	b->next = a->blocks;
	b->size = size;
	a->blocks = b;
	a->used += size;
	/* sizeof(sw_block) is 16: the first object stays 16-aligned. */
	a->cur = (char *)(b + 1);
	a->end = (char *)b + size;
	void *r = a->cur;
	a->cur += n;
	return r;
}

void sw_arena_free(sw_arena *a)
{
	while (a->blocks) {
		sw_block *next = a->blocks->next;
		free(a->blocks);
		a->blocks = next;
	}
}

bool sw_vec_push(sw_arena *a, sw_vec *vec, sw_node *nd)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 32;
		sw_node **v = sw_alloc(a, cap * sizeof *v);
		if (!v)
			return false;
		if (vec->n)
			memcpy(v, vec->v, vec->n * sizeof *v);
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = nd;
	return true;
}

sw_node *sw_new(sw_parser *p, sw_kind k)
{
	sw_node *nd = sw_alloc(p->arena, sizeof *nd);
	if (!nd) {
		p->failed = true;
		return NULL;
	}
	memset(nd, 0, sizeof *nd);
	nd->kind = (uint16_t)k;
	nd->kids = nd->inl;
	nd->cap = 2;
	return nd;
}

sw_node *sw_new_text(sw_parser *p, sw_kind k, const char *s, size_t n)
{
	sw_node *nd = sw_new(p, k);
	if (nd) {
		nd->payload = SW_PAY_TEXT;
		nd->text = s;
		nd->text_len = (uint32_t)n;
	}
	return nd;
}

sw_node *sw_new_str(sw_parser *p, sw_kind k, const char *s)
{
	return sw_new_text(p, k, s, strlen(s));
}

sw_node *sw_new_index(sw_parser *p, sw_kind k, uint64_t idx)
{
	sw_node *nd = sw_new(p, k);
	if (nd) {
		nd->payload = SW_PAY_INDEX;
		nd->index = idx;
	}
	return nd;
}

/* sw_add()'s slow path: the children outgrew their array. */
bool sw_add_grow(sw_parser *p, sw_node *parent, sw_node *child)
{
	uint32_t cap = parent->cap * 2;
	sw_node **v = sw_alloc(p->arena, cap * sizeof *v);
	if (!v) {
		p->failed = true;
		return false;
	}
	memcpy(v, parent->kids, parent->nkids * sizeof *v);
	parent->kids = v;
	parent->cap = cap;
	parent->kids[parent->nkids++] = child;
	return true;
}

/* Swift's addChild(): the parent, or NULL when either side is missing. */
sw_node *sw_add_ok(sw_parser *p, sw_node *parent, sw_node *child)
{
	return sw_add(p, parent, child) ? parent : NULL;
}

sw_node *sw_with1(sw_parser *p, sw_kind k, sw_node *a)
{
	if (!a)
		return NULL;
	sw_node *nd = sw_new(p, k);
	return sw_add_ok(p, nd, a);
}

sw_node *sw_with2(sw_parser *p, sw_kind k, sw_node *a, sw_node *b)
{
	if (!a || !b)
		return NULL;
	sw_node *nd = sw_with1(p, k, a);
	return sw_add_ok(p, nd, b);
}

sw_node *sw_with3(sw_parser *p, sw_kind k, sw_node *a, sw_node *b, sw_node *c)
{
	if (!a || !b || !c)
		return NULL;
	sw_node *nd = sw_with2(p, k, a, b);
	return sw_add_ok(p, nd, c);
}

sw_node *sw_type(sw_parser *p, sw_node *child)
{
	return sw_with1(p, SW_Type, child);
}

void sw_reverse(sw_node *nd, size_t from)
{
	if (!nd || nd->nkids < 2)
		return;
	for (size_t i = from, j = nd->nkids - 1; i < j; i++, j--) {
		sw_node *t = nd->kids[i];
		nd->kids[i] = nd->kids[j];
		nd->kids[j] = t;
	}
}

bool sw_text_is(const sw_node *nd, const char *s)
{
	size_t n = strlen(s);
	return nd && nd->payload == SW_PAY_TEXT && nd->text_len == n && memcmp(nd->text, s, n) == 0;
}

bool sw_next_if_str(sw_parser *p, const char *s)
{
	size_t n = strlen(s);
	if (p->len - p->pos < n || memcmp(p->text + p->pos, s, n) != 0)
		return false;
	p->pos += n;
	return true;
}

void sw_push_grow(sw_parser *p, sw_node *nd)
{
	if (!sw_vec_push(p->arena, &p->stack, nd))
		p->failed = true;
}

sw_node *sw_pop_if(sw_parser *p, bool (*pred)(sw_kind))
{
	if (!p->stack.n || !pred((sw_kind)p->stack.v[p->stack.n - 1]->kind))
		return NULL;
	return sw_pop(p);
}

void sw_add_subst(sw_parser *p, sw_node *nd)
{
	if (nd && !sw_vec_push(p->arena, &p->substs, nd))
		p->failed = true;
}

/* A natural number, or -1000 (Swift's "no number") when there is none or it
 * overflows. */
int sw_natural(sw_parser *p)
{
	char c = sw_peek(p);
	if (c < '0' || c > '9')
		return -1000;
	int num = 0;
	while ((c = sw_peek(p)) >= '0' && c <= '9') {
		if (num > (INT_MAX - (c - '0')) / 10)
			return -1000;
		num = num * 10 + (c - '0');
		p->pos++;
	}
	return num;
}

int sw_index(sw_parser *p)
{
	if (sw_next_if(p, '_'))
		return 0;
	int num = sw_natural(p);
	if (num >= 0 && num < INT_MAX && sw_next_if(p, '_'))
		return num + 1;
	return -1000;
}

sw_node *sw_index_node(sw_parser *p)
{
	int idx = sw_index(p);
	return idx >= 0 ? sw_new_index(p, SW_Number, (uint64_t)idx) : NULL;
}

bool sw_is_context(sw_kind k)
{
	switch (k) {
	case SW_Allocator:
	case SW_AnonymousContext:
	case SW_Class:
	case SW_Constructor:
	case SW_Deallocator:
	case SW_DefaultArgumentInitializer:
	case SW_Destructor:
	case SW_DidSet:
	case SW_Enum:
	case SW_ExplicitClosure:
	case SW_Extension:
	case SW_Function:
	case SW_Getter:
	case SW_GlobalGetter:
	case SW_IVarInitializer:
	case SW_IVarDestroyer:
	case SW_ImplicitClosure:
	case SW_Initializer:
	case SW_InitAccessor:
	case SW_IsolatedDeallocator:
	case SW_MaterializeForSet:
	case SW_ModifyAccessor:
	case SW_YieldingMutateAccessor:
	case SW_Module:
	case SW_NativeOwningAddressor:
	case SW_NativeOwningMutableAddressor:
	case SW_NativePinningAddressor:
	case SW_NativePinningMutableAddressor:
	case SW_OtherNominalType:
	case SW_OwningAddressor:
	case SW_OwningMutableAddressor:
	case SW_PropertyWrapperBackingInitializer:
	case SW_PropertyWrappedFieldInitAccessor:
	case SW_PropertyWrapperInitFromProjectedValue:
	case SW_Protocol:
	case SW_ReadAccessor:
	case SW_YieldingBorrowAccessor:
	case SW_Setter:
	case SW_Static:
	case SW_Structure:
	case SW_Subscript:
	case SW_TypeAlias:
	case SW_UnsafeAddressor:
	case SW_UnsafeMutableAddressor:
	case SW_Variable:
	case SW_WillSet:
	case SW_OpaqueReturnTypeOf:
	case SW_AutoDiffFunction:
	case SW_BorrowAccessor:
	case SW_MutateAccessor:
	case SW_BuiltinTupleType: return true;
	default: return false;
	}
}

static size_t prefix_len(const char *s)
{
	size_t u = s[0] == '_';
	if (s[u] == '$' && (s[u + 1] == 's' || s[u + 1] == 'S' || s[u + 1] == 'e'))
		return u + 2;
	if (s[0] == '_' && s[1] == 'T' && s[2] == '0')
		return 3;
	return 0;
}

bool sym_swift_is_mangled(const char *name)
{
	return name && prefix_len(name) > 0;
}

static void set_options(sw_opts *o, sym_swift_style style)
{
	bool full = style == SYM_SWIFT_FULL;
	memset(o, 0, sizeof *o);
	o->sugar = true;
	o->qualify = true;
	o->local_contexts = true;
	o->arg_types = true;
	o->closure_signature = true;
	o->stdlib_module = true;
	o->objc_module = true;
	o->ext_contexts = full;
	o->unmangled_suffix = full;
	o->module_names = full;
	o->generic_specializations = full;
	o->conformances = full;
	o->where_clauses = full;
	o->entity_types = full;
	o->private_discriminators = full;
	o->return_type = full;
	o->async_resume_partial = full;
	o->short_partial_apply = !full;
	o->short_thunk = !full;
	o->short_value_witness = !full;
}

/* Prints GLOBAL into a malloc'ed string, or NULL when the printer refused
 * the tree or the text outgrew SYM_SWIFT_MAX_OUTPUT. */
static char *print_global(sw_arena *arena, sw_node *global, sym_swift_style style, size_t in_len)
{
	char buf[SYM_SWIFT_MAX_OUTPUT + 1];
	sw_printer pr;
	memset(&pr, 0, sizeof pr);
	set_options(&pr.opt, style);
	pr.buf = buf;
	pr.cap = SYM_SWIFT_MAX_OUTPUT;
	pr.arena = arena;
	/* Substitutions make the tree a DAG: bound the walk, not just the text. */
	pr.max_visits = 64 * (size_t)SYM_SWIFT_MAX_OUTPUT + 64 * in_len;
	sw_print(&pr, global, 0, false);
	if (pr.invalid || pr.len == 0)
		return NULL;
	char *out = malloc(pr.len + 1);
	if (out) {
		memcpy(out, buf, pr.len);
		out[pr.len] = '\0';
	}
	return out;
}

char *sym_swift_demangle(const char *name, sym_swift_style style)
{
	size_t plen = name ? prefix_len(name) : 0;
	if (!plen)
		return NULL;
	size_t len = strnlen(name, SW_MAX_INPUT + 1);
	if (len > SW_MAX_INPUT)
		return NULL;
	/* Typical names fit in this first block: no malloc until they don't. */
	_Alignas(16) char first[8192];
	sw_arena arena = {
		.cur = first, .end = first + sizeof first, .limit = 4 * SW_FIRST_BLOCK + 512 * len};
	sw_parser p;
	memset(&p, 0, sizeof p);
	p.arena = &arena;
	p.text = name;
	p.len = len;
	p.pos = plen;
	p.old = name[0] == '_' && name[1] == 'T';
	char *out = NULL;
	sw_node *global = sw_parse_symbol(&p);
	if (global && !p.failed)
		out = print_global(&arena, global, style, len);
	sw_arena_free(&arena);
	return out;
}
