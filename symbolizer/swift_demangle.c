/*
 * swift_demangle.c — the Swift demangler's entry points, its per-call arena
 * and the node tree's primitives. The grammar lives in
 * swift_demangle_parse*.c, the printing in swift_demangle_print*.c; see
 * swift_demangle.h for the contract.
 */
#include "symbolizer/swift_demangle.h"
#include "symbolizer/swift_demangle_internal.h"

#include <limits.h>
#include <stddef.h>
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

/* sw_vec_push()'s slow path: the array is full. */
bool sw_vec_grow(sw_arena *a, sw_vec *vec, sw_node *nd)
{
	size_t cap = vec->cap ? vec->cap * 2 : 32;
	sw_node **v = sw_alloc(a, cap * sizeof *v);
	if (!v)
		return false;
	if (vec->n)
		memcpy(v, vec->v, vec->n * sizeof *v);
	vec->v = v;
	vec->cap = cap;
	vec->v[vec->n++] = nd;
	return true;
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

sw_node *sw_with3(sw_parser *p, sw_kind k, sw_node *a, sw_node *b, sw_node *c)
{
	if (!a || !b || !c)
		return NULL;
	sw_node *nd = sw_with2(p, k, a, b);
	return sw_add_ok(p, nd, c);
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

/* sw_natural()'s slow path: NUM, its first 9 digits, goes on. */
int sw_natural_long(sw_parser *p, int num)
{
	char c;
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

/* The kinds that can hold a named child (Swift's isContext()). */
const bool sw_context_kinds[SW_KIND_COUNT] = {
	[SW_Allocator] = true,
	[SW_AnonymousContext] = true,
	[SW_Class] = true,
	[SW_Constructor] = true,
	[SW_Deallocator] = true,
	[SW_DefaultArgumentInitializer] = true,
	[SW_Destructor] = true,
	[SW_DidSet] = true,
	[SW_Enum] = true,
	[SW_ExplicitClosure] = true,
	[SW_Extension] = true,
	[SW_Function] = true,
	[SW_Getter] = true,
	[SW_GlobalGetter] = true,
	[SW_IVarInitializer] = true,
	[SW_IVarDestroyer] = true,
	[SW_ImplicitClosure] = true,
	[SW_Initializer] = true,
	[SW_InitAccessor] = true,
	[SW_IsolatedDeallocator] = true,
	[SW_MaterializeForSet] = true,
	[SW_ModifyAccessor] = true,
	[SW_YieldingMutateAccessor] = true,
	[SW_Module] = true,
	[SW_NativeOwningAddressor] = true,
	[SW_NativeOwningMutableAddressor] = true,
	[SW_NativePinningAddressor] = true,
	[SW_NativePinningMutableAddressor] = true,
	[SW_OtherNominalType] = true,
	[SW_OwningAddressor] = true,
	[SW_OwningMutableAddressor] = true,
	[SW_PropertyWrapperBackingInitializer] = true,
	[SW_PropertyWrappedFieldInitAccessor] = true,
	[SW_PropertyWrapperInitFromProjectedValue] = true,
	[SW_Protocol] = true,
	[SW_ReadAccessor] = true,
	[SW_YieldingBorrowAccessor] = true,
	[SW_Setter] = true,
	[SW_Static] = true,
	[SW_Structure] = true,
	[SW_Subscript] = true,
	[SW_TypeAlias] = true,
	[SW_UnsafeAddressor] = true,
	[SW_UnsafeMutableAddressor] = true,
	[SW_Variable] = true,
	[SW_WillSet] = true,
	[SW_OpaqueReturnTypeOf] = true,
	[SW_AutoDiffFunction] = true,
	[SW_BorrowAccessor] = true,
	[SW_MutateAccessor] = true,
	[SW_BuiltinTupleType] = true,
};

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
	memset(&p, 0, offsetof(sw_parser, words));
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
