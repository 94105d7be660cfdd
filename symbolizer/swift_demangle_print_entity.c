/*
 * swift_demangle_print_entity.c — printing named entities (functions,
 * variables, accessors, closures, nominal types) with their contexts,
 * function types and parameter lists, generic signatures and SIL function
 * types, the way Swift's NodePrinter does.
 */
#include "symbolizer/swift_demangle_internal.h"

#include <string.h>

enum typr { TP_NONE, TP_COLON, TP_FUNCTION };

struct entity_style {
	enum typr typr;
	bool has_name;
	const char *extra; /* extra name ("closure #"), NULL when none */
	int64_t extra_index;
	const char *overwrite; /* replaces the name ("init", "subscript") */
	bool multi_word;       /* the extra name has a space */
};

static sw_node *child_of_kind(sw_node *nd, sw_kind k)
{
	for (uint32_t i = 0; nd && i < nd->nkids; i++)
		if (nd->kids[i]->kind == k)
			return nd->kids[i];
	return NULL;
}

static bool print_context(const sw_printer *pr, const sw_node *ctx)
{
	if (!pr->opt.qualify)
		return false;
	if (ctx->kind == SW_Module) {
		if (sw_text_is(ctx, "Swift"))
			return pr->opt.stdlib_module;
		if (sw_text_is(ctx, "__C"))
			return pr->opt.objc_module;
	}
	return true;
}

static bool need_space_before(const sw_node *type)
{
	while (type && type->kind == SW_Type)
		type = sw_kid(type, 0);
	if (!type)
		return true;
	switch (type->kind) {
	case SW_FunctionType:
	case SW_NoEscapeFunctionType:
	case SW_UncurriedFunctionType:
	case SW_DependentGenericType: return false;
	default: return true;
	}
}

/* "(label: Type, _: Type)" from a parameter tuple and its labels. */
static void print_parameters(sw_printer *pr, sw_node *labels, sw_node *args, int depth)
{
	if (!args || args->kind != SW_ArgumentTuple) {
		pr->invalid = true;
		return;
	}
	sw_node *params = sw_kid(sw_kid(args, 0), 0);
	if (!params) {
		pr->invalid = true;
		return;
	}
	if (params->kind != SW_Tuple) {
		sw_putc(pr, '(');
		sw_print(pr, params, depth + 1, false);
		sw_putc(pr, ')');
		return;
	}
	bool has_labels = labels && labels->nkids > 0;
	sw_putc(pr, '(');
	for (uint32_t i = 0; i < params->nkids; i++) {
		if (i)
			sw_put(pr, ", ");
		if (has_labels) {
			sw_node *l = sw_kid(labels, i);
			if (!l) {
				pr->invalid = true;
				return;
			}
			if (l->kind == SW_Identifier)
				sw_putn(pr, l->text, l->text_len);
			else
				sw_putc(pr, '_');
			sw_put(pr, ": ");
		}
		sw_print(pr, params->kids[i], depth + 1, false);
	}
	sw_putc(pr, ')');
}

static void print_convention(sw_printer *pr, sw_node *fn, const char *conv, int depth)
{
	sw_put(pr, "@convention(");
	sw_put(pr, conv);
	if (fn->kids[0]->kind == SW_ClangType) {
		sw_put(pr, ", mangledCType: \"");
		sw_print(pr, fn->kids[0], depth + 1, false);
		sw_putc(pr, '"');
	}
	sw_put(pr, ") ");
}

static void print_function_kind(sw_printer *pr, sw_node *fn, int depth)
{
	switch (fn->kind) {
	case SW_AutoClosureType:
	case SW_EscapingAutoClosureType: sw_put(pr, "@autoclosure "); break;
	case SW_ThinFunctionType: sw_put(pr, "@convention(thin) "); break;
	case SW_CFunctionPointer: print_convention(pr, fn, "c", depth); break;
	case SW_EscapingObjCBlock:
		sw_put(pr, "@escaping ");
		print_convention(pr, fn, "block", depth);
		break;
	case SW_ObjCBlock: print_convention(pr, fn, "block", depth); break;
	case SW_CalledOnceFunctionType: sw_put(pr, "@called(once) "); break;
	default: break;
	}
}

static bool kid_is(const sw_node *nd, uint32_t i, sw_kind k)
{
	return i < nd->nkids && nd->kids[i]->kind == k;
}

/* What a function type's children before its parameters say. */
struct fn_attrs {
	sw_node *nonisolated;
	sw_node *thrown;
	uint64_t diff;
	bool sending;
	bool sendable;
	bool async;
};

/* Reads the attributes (printing the isolation ones as Swift does, in
 * passing). */
static void read_fn_attrs(sw_printer *pr, sw_node *fn, struct fn_attrs *at, int depth)
{
	uint32_t i = 0;
	i += kid_is(fn, i, SW_ClangType);
	if (kid_is(fn, i, SW_SendingResultFunctionType))
		at->sending = true, i++;
	if (kid_is(fn, i, SW_IsolatedAnyFunctionType))
		sw_print(pr, fn->kids[i++], depth + 1, false);
	if (kid_is(fn, i, SW_NonIsolatedCallerFunctionType))
		at->nonisolated = fn->kids[i++];
	if (kid_is(fn, i, SW_GlobalActorFunctionType))
		sw_print(pr, fn->kids[i++], depth + 1, false);
	if (kid_is(fn, i, SW_DifferentiableFunctionType))
		at->diff = fn->kids[i++]->index;
	if (kid_is(fn, i, SW_ThrowsAnnotation) || kid_is(fn, i, SW_TypedThrowsAnnotation))
		at->thrown = fn->kids[i++];
	if (kid_is(fn, i, SW_ConcurrentFunctionType))
		at->sendable = true, i++;
	if (kid_is(fn, i, SW_AsyncAnnotation))
		at->async = true;
}

void sw_print_function_type(sw_printer *pr, sw_node *labels, sw_node *fn, int depth)
{
	if (!fn || fn->nkids < 2) {
		pr->invalid = true;
		return;
	}
	print_function_kind(pr, fn, depth);
	uint32_t arg = fn->nkids - 2;
	struct fn_attrs at = {0};
	/* Most function types are just parameters and result: the parameter
	 * tuple first is none of the attribute kinds, so there is none. */
	if (arg || fn->kids[0]->kind != SW_ArgumentTuple)
		read_fn_attrs(pr, fn, &at, depth);
	static const char *const diffs[] = {['f'] = "@differentiable(_forward) ",
					    ['r'] = "@differentiable(reverse) ",
					    ['l'] = "@differentiable(_linear) ",
					    ['d'] = "@differentiable "};
	if (at.diff < sizeof diffs / sizeof diffs[0] && diffs[at.diff])
		sw_put(pr, diffs[at.diff]);
	if (at.nonisolated)
		sw_print(pr, at.nonisolated, depth + 1, false);
	if (at.sendable)
		sw_put(pr, "@Sendable ");
	if (pr->opt.arg_types)
		print_parameters(pr, labels, fn->kids[arg], depth);
	if (!pr->opt.return_type)
		return;
	if (at.async)
		sw_put(pr, " async");
	if (at.thrown)
		sw_print(pr, at.thrown, depth + 1, false);
	sw_put(pr, " -> ");
	if (at.sending)
		sw_put(pr, "sending ");
	sw_print(pr, fn->kids[arg + 1], depth + 1, false);
}

static void print_entity_type(sw_printer *pr, sw_node *ent, sw_node *type, sw_node *gen_args,
			      int depth)
{
	sw_node *labels = child_of_kind(ent, SW_LabelList);
	if (!labels && !gen_args) {
		sw_print(pr, type, depth + 1, false);
		return;
	}
	if (gen_args) {
		sw_putc(pr, '<');
		sw_print_kids(pr, gen_args, depth, ", ");
		sw_putc(pr, '>');
	}
	if (type->kind == SW_DependentGenericType) {
		if (!gen_args)
			sw_print(pr, sw_kid(type, 0), depth + 1, false);
		sw_node *dep = sw_kid(type, 1);
		if (need_space_before(dep))
			sw_putc(pr, ' ');
		type = sw_kid(dep, 0);
	}
	sw_print_function_type(pr, labels, type, depth);
}

static void print_function_name(sw_printer *pr, sw_node *ent, struct entity_style *st, bool multi,
				int depth)
{
	if (st->has_name || st->overwrite) {
		if (st->extra && multi) {
			sw_put(pr, st->extra);
			if (st->extra_index >= 0)
				sw_put_u64(pr, (uint64_t)st->extra_index);
			sw_put(pr, " of ");
			st->extra = NULL;
			st->extra_index = -1;
		}
		size_t at = pr->len;
		if (st->overwrite) {
			sw_put(pr, st->overwrite);
		} else {
			sw_node *name = sw_kid(ent, 1);
			if (!name || name->kind != SW_PrivateDeclName)
				sw_print(pr, name, depth + 1, false);
			sw_node *priv = child_of_kind(ent, SW_PrivateDeclName);
			if (priv)
				sw_print(pr, priv, depth + 1, false);
		}
		if (pr->len != at && st->extra)
			sw_putc(pr, '.');
	}
	if (st->extra) {
		sw_put(pr, st->extra);
		if (st->extra_index >= 0)
			sw_put_u64(pr, (uint64_t)st->extra_index);
	}
}

static bool is_function_like(const sw_node *t)
{
	while (t && t->kind == SW_DependentGenericType)
		t = sw_kid(sw_kid(t, 1), 0);
	if (!t)
		return false;
	switch (t->kind) {
	case SW_FunctionType:
	case SW_NoEscapeFunctionType:
	case SW_UncurriedFunctionType:
	case SW_CFunctionPointer:
	case SW_ThinFunctionType: return true;
	default: return false;
	}
}

static void print_entity_signature(sw_printer *pr, sw_node *ent, sw_node *gen_args,
				   struct entity_style *st, bool multi, int depth)
{
	sw_node *type = sw_kid(child_of_kind(ent, SW_Type), 0);
	if (!type) {
		pr->invalid = true;
		return;
	}
	if (st->typr == TP_FUNCTION && !is_function_like(type))
		st->typr = TP_COLON;
	if (st->typr == TP_COLON) {
		if (pr->opt.entity_types) {
			sw_put(pr, " : ");
			print_entity_type(pr, ent, type, gen_args, depth);
		}
		return;
	}
	if ((ent->kind == SW_ExplicitClosure || ent->kind == SW_ImplicitClosure) &&
	    !pr->opt.closure_signature)
		return;
	if (multi || need_space_before(type))
		sw_putc(pr, ' ');
	print_entity_type(pr, ent, type, gen_args, depth);
}

static bool takes_of(sw_kind k)
{
	return k == SW_DefaultArgumentInitializer || k == SW_Initializer ||
	       k == SW_PropertyWrapperBackingInitializer ||
	       k == SW_PropertyWrappedFieldInitAccessor ||
	       k == SW_PropertyWrapperInitFromProjectedValue;
}

/* Either "<context>.<name>" or, when the name has several words or the
 * context cannot be a prefix, "<name> in <context>". Returns the context
 * still to print when printed as a prefix context. */
static sw_node *print_entity(sw_printer *pr, sw_node *ent, int depth, bool as_prefix,
			     struct entity_style st)
{
	sw_node *gen_args = NULL;
	if (ent->kind == SW_BoundGenericFunction) {
		gen_args = sw_kid(ent, 1);
		ent = sw_kid(ent, 0);
	}
	sw_node *ctx = sw_kid(ent, 0);
	if (!ctx) {
		pr->invalid = true;
		return NULL;
	}
	bool multi = st.multi_word;
	bool local = st.has_name && sw_kid(ent, 1) && ent->kids[1]->kind == SW_LocalDeclName;
	if (local && pr->opt.local_contexts)
		multi = true;
	if (as_prefix && (st.typr != TP_NONE || multi))
		return ent;
	sw_node *postfix = NULL;
	if (print_context(pr, ctx)) {
		if (multi) {
			postfix = ctx;
		} else {
			size_t at = pr->len;
			postfix = sw_print(pr, ctx, depth + 1, true);
			if (pr->len != at)
				sw_putc(pr, '.');
		}
	}
	print_function_name(pr, ent, &st, multi, depth);
	if (st.typr != TP_NONE)
		print_entity_signature(pr, ent, gen_args, &st, multi, depth);
	if (!as_prefix && postfix && (!local || pr->opt.local_contexts)) {
		sw_put(pr, takes_of((sw_kind)ent->kind) ? " of " : " in ");
		sw_print(pr, postfix, depth + 1, false);
		postfix = NULL;
	}
	return postfix;
}

static struct entity_style style(enum typr t, bool has_name, const char *extra, int64_t idx,
				 const char *overwrite)
{
	/* EXTRA is a literal at most calls: the search folds away. */
	struct entity_style st = {t,   has_name,  extra,
				  idx, overwrite, extra && strchr(extra, ' ') != NULL};
	return st;
}

static int64_t kid_index(const sw_node *nd, uint32_t i)
{
	sw_node *k = sw_kid(nd, i);
	return k ? (int64_t)k->index : 0;
}

/* "accessor macro @Foo expansion #": the macro's name is printed into the
 * arena first because it sits inside the entity's extra name. */
static const char *macro_extra(sw_printer *pr, const char *role, sw_node *name, int depth)
{
	sw_printer sub = *pr;
	sub.cap = 256;
	sub.len = 0;
	sub.buf = sw_alloc(pr->arena, sub.cap + 1);
	if (!sub.buf) {
		pr->invalid = true;
		return NULL;
	}
	sw_put(&sub, role);
	sw_put(&sub, " macro @");
	sw_print(&sub, name, depth + 1, false);
	sw_put(&sub, " expansion #");
	pr->visits = sub.visits;
	pr->invalid |= sub.invalid;
	sub.buf[sub.len] = '\0';
	return sub.buf;
}

static const char *attached_role(sw_kind k)
{
	switch (k) {
	case SW_AccessorAttachedMacroExpansion: return "accessor";
	case SW_MemberAttributeAttachedMacroExpansion: return "memberAttribute";
	case SW_MemberAttachedMacroExpansion: return "member";
	case SW_PeerAttachedMacroExpansion: return "peer";
	case SW_ConformanceAttachedMacroExpansion: return "conformance";
	case SW_ExtensionAttachedMacroExpansion: return "extension";
	case SW_PreambleAttachedMacroExpansion: return "preamble";
	case SW_BodyAttachedMacroExpansion: return "body";
	default: return NULL;
	}
}

static const char *storage_accessor(sw_kind k)
{
	switch (k) {
	case SW_OwningAddressor: return "owningAddressor";
	case SW_OwningMutableAddressor: return "owningMutableAddressor";
	case SW_NativeOwningAddressor: return "nativeOwningAddressor";
	case SW_NativeOwningMutableAddressor: return "nativeOwningMutableAddressor";
	case SW_NativePinningAddressor: return "nativePinningAddressor";
	case SW_NativePinningMutableAddressor: return "nativePinningMutableAddressor";
	case SW_UnsafeAddressor: return "unsafeAddressor";
	case SW_UnsafeMutableAddressor: return "unsafeMutableAddressor";
	case SW_GlobalGetter:
	case SW_Getter: return "getter";
	case SW_Setter: return "setter";
	case SW_MaterializeForSet: return "materializeForSet";
	case SW_WillSet: return "willset";
	case SW_DidSet: return "didset";
	case SW_ReadAccessor: return "read";
	case SW_YieldingBorrowAccessor: return "yielding_borrow";
	case SW_ModifyAccessor: return "modify";
	case SW_YieldingMutateAccessor: return "yielding_mutate";
	case SW_InitAccessor: return "init";
	case SW_BorrowAccessor: return "borrow";
	case SW_MutateAccessor: return "mutate";
	default: return NULL;
	}
}

static bool first_is_class(const sw_node *nd)
{
	return sw_kid(nd, 0) && nd->kids[0]->kind == SW_Class;
}

/* Entities named by fixed words: initializers, deinitializers, closures. */
static bool entity_style_of_kind(const sw_printer *pr, sw_node *nd, struct entity_style *st)
{
	enum typr closure = pr->opt.arg_types ? TP_FUNCTION : TP_NONE;
	switch (nd->kind) {
	case SW_Variable: *st = style(TP_COLON, true, NULL, -1, NULL); return true;
	case SW_Function:
	case SW_BoundGenericFunction: *st = style(TP_FUNCTION, true, NULL, -1, NULL); return true;
	case SW_Subscript: *st = style(TP_FUNCTION, false, NULL, -1, "subscript"); return true;
	case SW_Macro:
		*st = style(nd->nkids == 3 ? TP_COLON : TP_FUNCTION, true, NULL, -1, NULL);
		return true;
	case SW_GenericTypeParamDecl:
	case SW_Class:
	case SW_Structure:
	case SW_Enum:
	case SW_Protocol:
	case SW_TypeAlias:
	case SW_OtherNominalType: *st = style(TP_NONE, true, NULL, -1, NULL); return true;
	case SW_ExplicitClosure:
		*st = style(closure, false, "closure #", kid_index(nd, 1) + 1, NULL);
		return true;
	case SW_ImplicitClosure:
		*st = style(closure, false, "implicit closure #", kid_index(nd, 1) + 1, NULL);
		return true;
	case SW_Initializer:
		*st = style(TP_NONE, false, "variable initialization expression", -1, NULL);
		return true;
	case SW_PropertyWrapperBackingInitializer:
		*st = style(TP_NONE, false, "property wrapper backing initializer", -1, NULL);
		return true;
	case SW_PropertyWrappedFieldInitAccessor:
		*st = style(TP_NONE, false, "property wrapped field init accessor", -1, NULL);
		return true;
	case SW_PropertyWrapperInitFromProjectedValue:
		*st = style(TP_NONE, false, "property wrapper init from projected value", -1, NULL);
		return true;
	case SW_DefaultArgumentInitializer:
		*st = style(TP_NONE, false, "default argument ", kid_index(nd, 1), NULL);
		return true;
	default: return false;
	}
}

static bool entity_style_of_member(sw_printer *pr, sw_node *nd, int depth, struct entity_style *st)
{
	switch (nd->kind) {
	case SW_Allocator:
		*st = style(TP_FUNCTION, false, first_is_class(nd) ? "__allocating_init" : "init",
			    -1, NULL);
		return true;
	case SW_Constructor: *st = style(TP_FUNCTION, nd->nkids > 2, "init", -1, NULL); return true;
	case SW_Destructor: *st = style(TP_NONE, false, "deinit", -1, NULL); return true;
	case SW_Deallocator:
		*st = style(TP_NONE, false, first_is_class(nd) ? "__deallocating_deinit" : "deinit",
			    -1, NULL);
		return true;
	case SW_IsolatedDeallocator:
		*st = style(TP_NONE, false,
			    first_is_class(nd) ? "__isolated_deallocating_deinit" : "deinit", -1,
			    NULL);
		return true;
	case SW_IVarInitializer:
		*st = style(TP_NONE, false, "__ivar_initializer", -1, NULL);
		return true;
	case SW_IVarDestroyer:
		*st = style(TP_NONE, false, "__ivar_destroyer", -1, NULL);
		return true;
	case SW_FreestandingMacroExpansion:
		*st = style(TP_NONE, true, "freestanding macro expansion #", kid_index(nd, 2) + 1,
			    NULL);
		return true;
	case SW_MacroExpansionUniqueName:
		*st = style(TP_NONE, true, "unique name #", kid_index(nd, 2) + 1, NULL);
		return true;
	default: break;
	}
	const char *role = attached_role((sw_kind)nd->kind);
	if (!role)
		return false;
	*st = style(TP_NONE, true, macro_extra(pr, role, sw_kid(nd, 2), depth),
		    kid_index(nd, 3) + 1, NULL);
	return st->extra != NULL;
}

/* The kinds entity_style_of_kind() knows, the parameter tuple and the
 * storage accessors share no kind, so which is asked first does not
 * matter: the most common go first. */
bool sw_print_entity(sw_printer *pr, sw_node *nd, int depth, bool as_prefix, sw_node **out_ctx)
{
	struct entity_style st;
	if (entity_style_of_kind(pr, nd, &st)) {
		*out_ctx = print_entity(pr, nd, depth, as_prefix, st);
		return true;
	}
	if (nd->kind == SW_ArgumentTuple) {
		print_parameters(pr, NULL, nd, depth);
		return true;
	}
	const char *acc = storage_accessor((sw_kind)nd->kind);
	if (acc) {
		sw_node *storage = sw_kid(nd, 0);
		if (!storage || (storage->kind != SW_Variable && storage->kind != SW_Subscript)) {
			pr->invalid = true;
			return true;
		}
		st = storage->kind == SW_Variable ? style(TP_COLON, true, acc, -1, NULL)
						  : style(TP_COLON, false, acc, -1, "subscript");
		*out_ctx = print_entity(pr, storage, depth, as_prefix, st);
		return true;
	}
	if (!entity_style_of_member(pr, nd, depth, &st))
		return false;
	*out_ctx = print_entity(pr, nd, depth, as_prefix, st);
	return true;
}

bool sw_print_entity_kinds(sw_printer *pr, sw_node *nd, int depth, bool as_prefix,
			   sw_node **out_ctx)
{
	/* Most nodes printed are types: let them through quickly. */
	switch (nd->kind) {
	case SW_Class:
	case SW_Structure:
	case SW_Enum:
	case SW_Protocol:
	case SW_TypeAlias:
	case SW_OtherNominalType:
	case SW_BoundGenericFunction: break;
	default:
		if (sw_is_simple_type(nd))
			return false;
	}
	return sw_print_entity(pr, nd, depth, as_prefix, out_ctx);
}

/* ---- generic signatures ---- */

static bool marks_param(const sw_node *sig, uint32_t from, uint32_t to, sw_kind marker,
			uint64_t depth, uint64_t index)
{
	for (uint32_t i = from; i < to; i++) {
		sw_node *c = sig->kids[i];
		if (c->kind != marker)
			continue;
		sw_node *t = sw_kid(c, 0);
		if (!t || t->kind != SW_Type)
			continue;
		sw_node *gp = sw_kid(t, 0);
		if (!gp || gp->kind != SW_DependentGenericParamType)
			continue;
		/* Swift compares the index with the param's first child (its
		 * depth) and the depth with the second; kept for identical
		 * output. */
		if (index == (uint64_t)kid_index(gp, 0) && depth == (uint64_t)kid_index(gp, 1))
			return true;
	}
	return false;
}

void sw_print_generic_signature(sw_printer *pr, sw_node *sig, int depth)
{
	uint32_t n = sig->nkids, nparams = 0, first_req;
	while (nparams < n && sig->kids[nparams]->kind == SW_DependentGenericParamCount)
		nparams++;
	for (first_req = nparams; first_req < n; first_req++) {
		sw_node *c = sig->kids[first_req];
		if (c->kind == SW_Type)
			c = sw_kid(c, 0);
		if (!c || (c->kind != SW_DependentGenericParamPackMarker &&
			   c->kind != SW_DependentGenericParamValueMarker))
			break;
	}
	sw_putc(pr, '<');
	for (uint32_t d = 0; d < nparams && !pr->invalid; d++) {
		if (d)
			sw_put(pr, "><");
		uint64_t count = sig->kids[d]->index;
		for (uint64_t i = 0; i < count && !pr->invalid; i++) {
			if (i)
				sw_put(pr, ", ");
			if (i >= 128) {
				sw_put(pr, "...");
				break;
			}
			if (marks_param(sig, nparams, first_req, SW_DependentGenericParamPackMarker,
					d, i))
				sw_put(pr, "each ");
			if (marks_param(sig, nparams, first_req,
					SW_DependentGenericParamValueMarker, d, i))
				sw_put(pr, "let ");
			sw_print_param_name(pr, d, i);
		}
	}
	if (first_req != n && pr->opt.where_clauses) {
		sw_put(pr, " where ");
		for (uint32_t i = first_req; i < n; i++) {
			if (i > first_req)
				sw_put(pr, ", ");
			sw_print(pr, sig->kids[i], depth + 1, false);
		}
	}
	sw_putc(pr, '>');
}

/* ---- SIL function types ---- */

enum impl_state { IS_ATTRS, IS_INPUTS, IS_RESULTS };

struct impl_print {
	sw_node *pattern;
	sw_node *invocation;
	sw_node *sending;
	enum impl_state state;
};

static void impl_transition(sw_printer *pr, struct impl_print *ip, enum impl_state to, int depth)
{
	for (; ip->state < to; ip->state++) {
		if (ip->state == IS_ATTRS) {
			if (ip->pattern) {
				sw_put(pr, "@substituted ");
				sw_print(pr, sw_kid(ip->pattern, 0), depth + 1, false);
				sw_putc(pr, ' ');
			}
			sw_putc(pr, '(');
		} else {
			sw_put(pr, ") -> ");
			if (ip->sending) {
				sw_print(pr, ip->sending, depth + 1, false);
				sw_putc(pr, ' ');
			}
			sw_putc(pr, '(');
		}
	}
}

void sw_print_impl_function_type(sw_printer *pr, sw_node *fn, int depth)
{
	struct impl_print ip = {0};
	for (uint32_t i = 0; i < fn->nkids; i++) {
		sw_node *c = fn->kids[i];
		switch (c->kind) {
		case SW_ImplParameter:
			if (ip.state == IS_INPUTS)
				sw_put(pr, ", ");
			impl_transition(pr, &ip, IS_INPUTS, depth);
			sw_print(pr, c, depth + 1, false);
			break;
		case SW_ImplResult:
		case SW_ImplYield:
		case SW_ImplErrorResult:
			if (ip.state == IS_RESULTS)
				sw_put(pr, ", ");
			impl_transition(pr, &ip, IS_RESULTS, depth);
			sw_print(pr, c, depth + 1, false);
			break;
		case SW_ImplPatternSubstitutions: ip.pattern = c; break;
		case SW_ImplInvocationSubstitutions: ip.invocation = c; break;
		case SW_ImplSendingResult: ip.sending = c; break;
		default:
			sw_print(pr, c, depth + 1, false);
			sw_putc(pr, ' ');
			break;
		}
	}
	impl_transition(pr, &ip, IS_RESULTS, depth);
	sw_putc(pr, ')');
	if (ip.pattern) {
		sw_put(pr, " for <");
		sw_print_kids(pr, sw_kid(ip.pattern, 1), depth, NULL);
		sw_putc(pr, '>');
	}
	if (ip.invocation) {
		sw_put(pr, " for <");
		sw_print_kids(pr, sw_kid(ip.invocation, 0), depth, NULL);
		sw_putc(pr, '>');
	}
}
