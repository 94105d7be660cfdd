/*
 * swift_demangle_print_global.c — printing what surrounds entities: the
 * global symbol, thunks, specializations, witnesses, conformances,
 * autodiff and SIL parts, in Swift's NodePrinter words.
 */
#include "symbolizer/swift_demangle_internal.h"

#include <string.h>

static void kid(sw_printer *pr, sw_node *nd, uint32_t i, int depth)
{
	sw_print(pr, sw_kid(nd, i), depth + 1, false);
}

static void put_text(sw_printer *pr, const sw_node *nd)
{
	if (nd && nd->payload == SW_PAY_TEXT)
		sw_putn(pr, nd->text, nd->text_len);
}

/* ---- function signature specializations ---- */

static void print_param_kind(sw_printer *pr, uint64_t raw)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} flags[] = {{FSP_EXISTENTIAL_TO_GENERIC, "Existential To Protocol Constrained Generic"},
		     {FSP_DEAD, "Dead"},
		     {FSP_OWNED_TO_GUARANTEED, "Owned To Guaranteed"},
		     {FSP_GUARANTEED_TO_OWNED, "Guaranteed To Owned"},
		     {FSP_SROA, "Exploded"}};
	static const char *const plain[] = {
		"Constant Propagated Function", "Constant Propagated Global",
		"Constant Propagated Integer",	"Constant Propagated Float",
		"Constant Propagated String",	"Closure Propagated",
		"Value Promoted from Box",	"Stack Promoted from Box",
		"InOut Converted to Out",	"Constant Propagated KeyPath",
		"Constant Propagated Struct",	"Same As Argument",
		"Escaping Closure Propagated",
	};
	bool any = false;
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
		if (!(raw & flags[i].bit))
			continue;
		if (any)
			sw_put(pr, " and ");
		any = true;
		sw_put(pr, flags[i].name);
	}
	if (!any && raw < sizeof plain / sizeof plain[0])
		sw_put(pr, plain[raw]);
}

static bool is_param_meta(const sw_node *c)
{
	return c->kind == SW_FunctionSignatureSpecializationParamKind ||
	       c->kind == SW_FunctionSignatureSpecializationParamPayload;
}

static void next_param_child(sw_printer *pr, sw_node *nd, uint32_t *at, uint64_t kind, int depth)
{
	while (*at < nd->nkids) {
		sw_node *c = nd->kids[(*at)++];
		if (is_param_meta(c))
			continue;
		if (kind == FSP_CONST_STRING && c->payload == SW_PAY_TEXT && c->text_len &&
		    c->text[0] == '_')
			sw_putn(pr, c->text + 1, c->text_len - 1);
		else if (c->payload == SW_PAY_TEXT &&
			 (kind == FSP_CONST_INTEGER || kind == FSP_CONST_FLOAT ||
			  kind == FSP_CONST_FUNCTION || kind == FSP_CONST_GLOBAL))
			put_text(pr, c);
		else
			sw_print(pr, c, depth + 1, false);
		return;
	}
}

static void print_closure_param(sw_printer *pr, sw_node *nd, uint32_t *idx, int depth)
{
	sw_putc(pr, '[');
	kid(pr, nd, (*idx)++, depth);
	sw_put(pr, " : ");
	kid(pr, nd, (*idx)++, depth);
	sw_put(pr, ", Argument Types : [");
	while (*idx < nd->nkids) {
		sw_node *c = nd->kids[*idx];
		if (c->kind != SW_Type)
			break;
		sw_print(pr, c, depth + 1, false);
		++*idx;
		if (*idx < nd->nkids && nd->kids[*idx]->payload == SW_PAY_TEXT)
			sw_put(pr, ", ");
	}
	sw_putc(pr, ']');
}

/* One constant (or other change) of a specialized parameter. */
static bool print_fsig_step(sw_printer *pr, sw_node *nd, uint32_t *idx, uint32_t *arg, int depth)
{
	uint32_t end = nd->nkids;
	uint64_t v = nd->kids[*idx]->index;
	switch (v) {
	case FSP_CONST_FUNCTION:
	case FSP_CONST_GLOBAL:
	case FSP_CONST_STRUCT:
		sw_putc(pr, '[');
		kid(pr, nd, (*idx)++, depth);
		sw_put(pr, " : ");
		next_param_child(pr, nd, arg, v, depth);
		sw_putc(pr, ']');
		return true;
	case FSP_CONST_INTEGER:
	case FSP_CONST_FLOAT:
	case FSP_CONST_STRING:
		if (*idx + 2 > end)
			return false;
		sw_putc(pr, '[');
		kid(pr, nd, (*idx)++, depth);
		sw_put(pr, " : ");
		kid(pr, nd, (*idx)++, depth);
		if (v == FSP_CONST_STRING) {
			sw_putc(pr, '\'');
			next_param_child(pr, nd, arg, v, depth);
			sw_putc(pr, '\'');
		}
		sw_putc(pr, ']');
		return true;
	case FSP_CONST_KEYPATH:
		sw_putc(pr, '[');
		kid(pr, nd, (*idx)++, depth);
		sw_put(pr, " : ");
		next_param_child(pr, nd, arg, v, depth);
		sw_putc(pr, '<');
		next_param_child(pr, nd, arg, v, depth);
		sw_putc(pr, ',');
		next_param_child(pr, nd, arg, v, depth);
		sw_put(pr, ">]");
		return true;
	case FSP_CLOSURE:
	case FSP_ESCAPING_CLOSURE:
		if (*idx + 2 > end)
			return false;
		print_closure_param(pr, nd, idx, depth);
		return true;
	case FSP_CLOSURE_PREV_ARG:
		if (*idx + 2 > end)
			return false;
		sw_putc(pr, '[');
		kid(pr, nd, (*idx)++, depth);
		sw_putc(pr, ' ');
		kid(pr, nd, (*idx)++, depth);
		sw_putc(pr, ']');
		return true;
	default: kid(pr, nd, (*idx)++, depth); return true;
	}
}

static void print_fsig_params(sw_printer *pr, sw_node *nd, int depth)
{
	uint32_t idx = 0, arg = 0;
	while (idx < nd->nkids && !pr->invalid) {
		if (nd->kids[idx]->payload != SW_PAY_INDEX)
			return;
		if (!print_fsig_step(pr, nd, &idx, &arg, depth))
			return;
	}
}

void sw_print_spec_prefix(sw_printer *pr, sw_node *nd, const char *desc, int depth,
			  const char *param_prefix)
{
	if (!pr->opt.generic_specializations) {
		if (!pr->spec_prefix_printed)
			sw_put(pr, "specialized ");
		pr->spec_prefix_printed = true;
		return;
	}
	if (sw_kid(nd, 0) && nd->kids[0]->kind == SW_RepresentationChanged) {
		sw_put(pr, "representation changed of ");
		return;
	}
	sw_put(pr, desc);
	sw_put(pr, " <");
	const char *sep = "";
	uint64_t argn = 0;
	for (uint32_t i = 0; i < nd->nkids; i++) {
		sw_node *c = nd->kids[i];
		if (c->kind == SW_SpecializationPassID || c->kind == SW_DroppedArgument)
			continue;
		if (c->kind == SW_IsSerialized) {
			sw_put(pr, sep);
			sep = ", ";
			sw_print(pr, c, depth + 1, false);
			continue;
		}
		if (c->nkids) {
			sw_put(pr, sep);
			sw_put(pr, param_prefix);
			sep = ", ";
			if (c->kind == SW_FunctionSignatureSpecializationParam) {
				sw_put(pr, "Arg[");
				sw_put_u64(pr, argn);
				sw_put(pr, "] = ");
				print_fsig_params(pr, c, depth);
			} else if (c->kind == SW_FunctionSignatureSpecializationReturn) {
				sw_put(pr, "Return = ");
				print_fsig_params(pr, c, depth);
			} else {
				sw_print(pr, c, depth + 1, false);
			}
		}
		argn++;
	}
	sw_put(pr, "> of ");
}

static bool print_specializations(sw_printer *pr, sw_node *nd, int depth)
{
	const char *desc, *param_prefix = "";
	switch (nd->kind) {
	case SW_FunctionSignatureSpecialization: desc = "function signature specialization"; break;
	case SW_GenericPartialSpecialization:
		desc = "generic partial specialization";
		param_prefix = "Signature = ";
		break;
	case SW_GenericPartialSpecializationNotReAbstracted:
		desc = "generic not-reabstracted partial specialization";
		param_prefix = "Signature = ";
		break;
	case SW_GenericSpecialization:
	case SW_GenericSpecializationInResilienceDomain: desc = "generic specialization"; break;
	case SW_GenericSpecializationPrespecialized: desc = "generic pre-specialization"; break;
	case SW_GenericSpecializationNotReAbstracted:
		desc = "generic not re-abstracted specialization";
		break;
	case SW_InlinedGenericFunction: desc = "inlined generic function"; break;
	default: return false;
	}
	sw_print_spec_prefix(pr, nd, desc, depth, param_prefix);
	return true;
}

static void print_spec_param(sw_printer *pr, sw_node *nd, int depth)
{
	kid(pr, nd, 0, depth);
	for (uint32_t i = 1; i < nd->nkids; i++) {
		sw_put(pr, i == 1 ? " with " : " and ");
		kid(pr, nd, i, depth);
	}
}

/* ---- thunks ---- */

static void print_reabstraction(sw_printer *pr, sw_node *nd, int depth)
{
	if (pr->opt.short_thunk) {
		sw_put(pr, "thunk for ");
		kid(pr, nd, nd->nkids - 1, depth);
		return;
	}
	sw_put(pr, "reabstraction thunk ");
	if (nd->kind == SW_ReabstractionThunkHelper)
		sw_put(pr, "helper ");
	uint32_t idx = 0;
	if (nd->nkids == 3) {
		kid(pr, nd, 0, depth);
		sw_putc(pr, ' ');
		idx = 1;
	}
	sw_put(pr, "from ");
	kid(pr, nd, idx + 1, depth);
	sw_put(pr, " to ");
	kid(pr, nd, idx, depth);
}

static void print_reabstraction_self(sw_printer *pr, sw_node *nd, int depth)
{
	sw_put(pr, "reabstraction thunk ");
	uint32_t idx = 0;
	if (nd->nkids == 4) {
		kid(pr, nd, 0, depth);
		sw_putc(pr, ' ');
		idx = 1;
	}
	sw_put(pr, "from ");
	kid(pr, nd, idx + 2, depth);
	sw_put(pr, " to ");
	kid(pr, nd, idx + 1, depth);
	sw_put(pr, " self ");
	kid(pr, nd, idx, depth);
}

static void print_partial_apply(sw_printer *pr, sw_node *nd, int depth)
{
	if (pr->opt.short_partial_apply)
		sw_put(pr, "partial apply");
	else if (nd->kind == SW_PartialApplyForwarder)
		sw_put(pr, "partial apply forwarder");
	else
		sw_put(pr, "partial apply ObjC forwarder");
	if (nd->nkids) {
		sw_put(pr, " for ");
		sw_print_kids(pr, nd, depth, NULL);
	}
}

static void print_key_path(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_KeyPathGetterThunkHelper: sw_put(pr, "key path getter for "); break;
	case SW_KeyPathSetterThunkHelper: sw_put(pr, "key path setter for "); break;
	case SW_KeyPathUnappliedMethodThunkHelper: sw_put(pr, "key path unapplied method "); break;
	default: sw_put(pr, "key path applied method "); break;
	}
	kid(pr, nd, 0, depth);
	sw_put(pr, " : ");
	for (uint32_t i = 1; i < nd->nkids; i++) {
		if (nd->kids[i]->kind == SW_IsSerialized)
			sw_put(pr, ", ");
		kid(pr, nd, i, depth);
	}
}

static void print_key_path_hash(sw_printer *pr, sw_node *nd, int depth)
{
	sw_put(pr, nd->kind == SW_KeyPathEqualsThunkHelper ? "key path index equality operator for "
							   : "key path index hash operator for ");
	uint32_t last = nd->nkids;
	if (last && nd->kids[last - 1]->kind == SW_IsSerialized)
		last--;
	if (last && nd->kids[last - 1]->kind == SW_DependentGenericSignature) {
		kid(pr, nd, last - 1, depth);
		last--;
	}
	sw_putc(pr, '(');
	for (uint32_t i = 0; i < last; i++) {
		if (i)
			sw_put(pr, ", ");
		kid(pr, nd, i, depth);
	}
	sw_putc(pr, ')');
}

static void print_pair(sw_printer *pr, sw_node *nd, int depth, const char *a, uint32_t i,
		       const char *b, uint32_t j)
{
	sw_put(pr, a);
	kid(pr, nd, i, depth);
	sw_put(pr, b);
	kid(pr, nd, j, depth);
}

static bool print_thunks(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_ReabstractionThunk:
	case SW_ReabstractionThunkHelper: print_reabstraction(pr, nd, depth); return true;
	case SW_ReabstractionThunkHelperWithSelf:
		print_reabstraction_self(pr, nd, depth);
		return true;
	case SW_ReabstractionThunkHelperWithGlobalActor:
		print_pair(pr, nd, depth, "", 0, " with global actor constraint ", 1);
		return true;
	case SW_PartialApplyForwarder:
	case SW_PartialApplyObjCForwarder: print_partial_apply(pr, nd, depth); return true;
	case SW_KeyPathGetterThunkHelper:
	case SW_KeyPathSetterThunkHelper:
	case SW_KeyPathUnappliedMethodThunkHelper:
	case SW_KeyPathAppliedMethodThunkHelper: print_key_path(pr, nd, depth); return true;
	case SW_KeyPathEqualsThunkHelper:
	case SW_KeyPathHashThunkHelper: print_key_path_hash(pr, nd, depth); return true;
	case SW_VTableThunk:
		print_pair(pr, nd, depth, "vtable thunk for ", 1, " dispatching to ", 0);
		return true;
	case SW_ProtocolWitness:
		print_pair(pr, nd, depth, "protocol witness for ", 1, " in conformance ", 0);
		return true;
	case SW_LazyProtocolWitnessTableAccessor:
		print_pair(pr, nd, depth, "lazy protocol witness table accessor for type ", 0,
			   " and conformance ", 1);
		return true;
	case SW_LazyProtocolWitnessTableCacheVariable:
		print_pair(pr, nd, depth, "lazy protocol witness table cache variable for type ", 0,
			   " and conformance ", 1);
		return true;
	case SW_OutlinedCopy:
	case SW_OutlinedConsume:
		sw_put(pr,
		       nd->kind == SW_OutlinedCopy ? "outlined copy of " : "outlined consume of ");
		kid(pr, nd, 0, depth);
		if (nd->nkids > 1)
			kid(pr, nd, 1, depth);
		return true;
	default: return false;
	}
}

/* ---- autodiff ---- */

static void print_autodiff_function(sw_printer *pr, sw_node *nd, int depth)
{
	uint32_t end = 0;
	while (end < nd->nkids && nd->kids[end]->kind != SW_AutoDiffFunctionKind)
		end++;
	if (end + 2 >= nd->nkids) {
		pr->invalid = true;
		return;
	}
	if (nd->kind == SW_AutoDiffDerivativeVTableThunk)
		sw_put(pr, "vtable thunk for ");
	kid(pr, nd, end, depth);
	sw_put(pr, " of ");
	sw_node *sig = NULL;
	for (uint32_t i = 0; i < end; i++) {
		if (i == end - 1 && nd->kids[i]->kind == SW_DependentGenericSignature) {
			sig = nd->kids[i];
			break;
		}
		kid(pr, nd, i, depth);
	}
	if (pr->opt.short_thunk)
		return;
	print_pair(pr, nd, depth, " with respect to parameters ", end + 1, " and results ",
		   end + 2);
	if (sig && pr->opt.where_clauses) {
		sw_put(pr, " with ");
		sw_print(pr, sig, depth + 1, false);
	}
}

static void print_autodiff_reorder(sw_printer *pr, sw_node *nd, int depth)
{
	sw_put(pr, "autodiff self-reordering reabstraction thunk ");
	if (nd->nkids < 3) {
		pr->invalid = true;
		return;
	}
	if (pr->opt.short_thunk) {
		sw_put(pr, "for ");
		kid(pr, nd, 0, depth);
		return;
	}
	uint32_t i = 2;
	sw_node *sig = nd->kids[2]->kind == SW_DependentGenericSignature ? nd->kids[i++] : NULL;
	sw_put(pr, "for ");
	kid(pr, nd, i, depth);
	if (sig) {
		sw_print(pr, sig, depth + 1, false);
		sw_putc(pr, ' ');
	}
	print_pair(pr, nd, depth, " from ", 0, " to ", 1);
}

static void print_autodiff_subset(sw_printer *pr, sw_node *nd, int depth)
{
	sw_put(pr, "autodiff subset parameters thunk for ");
	if (nd->nkids < 5) {
		pr->invalid = true;
		return;
	}
	uint32_t cur = nd->nkids - 1;
	uint32_t to_params = cur--, results = cur--, params = cur--, kind = cur--;
	kid(pr, nd, kind, depth);
	sw_put(pr, " from ");
	if (cur == 0)
		kid(pr, nd, 0, depth);
	for (uint32_t i = 0; cur > 0 && i < cur; i++)
		kid(pr, nd, i, depth);
	if (pr->opt.short_thunk)
		return;
	print_pair(pr, nd, depth, " with respect to parameters ", params, " and results ", results);
	sw_put(pr, " to parameters ");
	kid(pr, nd, to_params, depth);
	if (cur > 0) {
		sw_put(pr, " of type ");
		kid(pr, nd, cur, depth);
	}
}

static void print_diff_witness(sw_printer *pr, sw_node *nd, int depth)
{
	uint32_t i = 0;
	while (i < nd->nkids && nd->kids[i]->kind != SW_Index)
		i++;
	if (i + 2 >= nd->nkids) {
		pr->invalid = true;
		return;
	}
	switch (nd->kids[i]->index) {
	case 'f': sw_put(pr, "forward-mode"); break;
	case 'r': sw_put(pr, "reverse-mode"); break;
	case 'd': sw_put(pr, "normal"); break;
	default: sw_put(pr, "linear"); break;
	}
	sw_put(pr, " differentiability witness for ");
	for (uint32_t k = 0; k < i; k++)
		kid(pr, nd, k, depth);
	print_pair(pr, nd, depth, " with respect to parameters ", i + 1, " and results ", i + 2);
	if (i + 3 < nd->nkids) {
		sw_put(pr, " with ");
		kid(pr, nd, i + 3, depth);
	}
}

static void print_index_subset(sw_printer *pr, const sw_node *nd)
{
	sw_putc(pr, '{');
	bool any = false;
	for (uint32_t i = 0; i < nd->text_len; i++) {
		if (nd->text[i] != 'S')
			continue;
		if (any)
			sw_put(pr, ", ");
		sw_put_u64(pr, i);
		any = true;
	}
	sw_putc(pr, '}');
}

static bool print_autodiff(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_AutoDiffFunction:
	case SW_AutoDiffDerivativeVTableThunk: print_autodiff_function(pr, nd, depth); return true;
	case SW_AutoDiffSelfReorderingReabstractionThunk:
		print_autodiff_reorder(pr, nd, depth);
		return true;
	case SW_AutoDiffSubsetParametersThunk: print_autodiff_subset(pr, nd, depth); return true;
	case SW_AutoDiffFunctionKind:
		switch (nd->index) {
		case 'f': sw_put(pr, "forward-mode derivative"); break;
		case 'r': sw_put(pr, "reverse-mode derivative"); break;
		case 'd': sw_put(pr, "differential"); break;
		default: sw_put(pr, "pullback"); break;
		}
		return true;
	case SW_DifferentiabilityWitness: print_diff_witness(pr, nd, depth); return true;
	case SW_IndexSubset: print_index_subset(pr, nd); return true;
	default: return false;
	}
}

/* ---- conformances and associated types ---- */

static void print_optional_index(sw_printer *pr, const sw_node *nd)
{
	if (nd && nd->payload == SW_PAY_INDEX) {
		sw_putc(pr, '#');
		sw_put_u64(pr, nd->index);
		sw_putc(pr, ' ');
	}
}

static void print_conformance(sw_printer *pr, sw_node *nd, int depth)
{
	if (nd->nkids == 4) {
		print_pair(pr, nd, depth, "property behavior storage of ", 2, " in ", 0);
		sw_put(pr, " : ");
		kid(pr, nd, 1, depth);
		return;
	}
	kid(pr, nd, 0, depth);
	if (pr->opt.conformances)
		print_pair(pr, nd, depth, " : ", 1, " in ", 2);
}

static void print_list_in_parens(sw_printer *pr, sw_node *nd, int depth)
{
	if (nd->nkids) {
		sw_putc(pr, '(');
		sw_print_kids(pr, nd, depth, ", ");
		sw_putc(pr, ')');
	}
}

static void print_concrete_conformance(sw_printer *pr, sw_node *nd, int depth)
{
	sw_put(pr, "concrete protocol conformance ");
	print_optional_index(pr, nd);
	print_pair(pr, nd, depth, "", 0, " to ", 1);
	if (nd->nkids > 2 && nd->kids[2]->nkids) {
		sw_put(pr, " with conditional requirements: ");
		kid(pr, nd, 2, depth);
	}
}

static void print_dependent_conformance(sw_printer *pr, sw_node *nd, int depth, const char *what)
{
	sw_put(pr, what);
	print_optional_index(pr, sw_kid(nd, 2));
	print_pair(pr, nd, depth, "", 0, " to ", 1);
}

static bool print_conformances(sw_printer *pr, sw_node *nd, int depth)
{
	static const char *const prefixed[SW_KIND_COUNT] = {
		[SW_PackProtocolConformance] = "pack protocol conformance ",
		[SW_DependentAssociatedConformance] = "dependent associated conformance ",
		[SW_ProtocolConformanceRefInTypeModule] =
			"protocol conformance ref (type's module) ",
		[SW_ProtocolConformanceRefInProtocolModule] =
			"protocol conformance ref (protocol's module) ",
		[SW_ProtocolConformanceRefInOtherModule] =
			"protocol conformance ref (retroactive) ",
		[SW_AssociatedTypeGenericParamRef] =
			"generic parameter reference for associated type ",
	};
	if (prefixed[nd->kind]) {
		sw_put(pr, prefixed[nd->kind]);
		sw_print_kids(pr, nd, depth, NULL);
		return true;
	}
	switch (nd->kind) {
	case SW_ProtocolConformance: print_conformance(pr, nd, depth); return true;
	case SW_AnyProtocolConformanceList: print_list_in_parens(pr, nd, depth); return true;
	case SW_ConcreteProtocolConformance: print_concrete_conformance(pr, nd, depth); return true;
	case SW_DependentProtocolConformanceAssociated:
		print_dependent_conformance(pr, nd, depth,
					    "dependent associated protocol conformance ");
		return true;
	case SW_DependentProtocolConformanceInherited:
		print_dependent_conformance(pr, nd, depth,
					    "dependent inherited protocol conformance ");
		return true;
	case SW_DependentProtocolConformanceRoot:
		print_dependent_conformance(pr, nd, depth, "dependent root protocol conformance ");
		return true;
	case SW_DependentProtocolConformanceOpaque:
		print_pair(pr, nd, depth, "opaque result conformance ", 0, " of ", 1);
		return true;
	case SW_RetroactiveConformance:
		if (nd->nkids == 2)
			print_pair(pr, nd, depth, "retroactive @ ", 0, "", 1);
		return true;
	case SW_AssocTypePath: sw_print_kids(pr, nd, depth, "."); return true;
	default: return false;
	}
}

static bool print_assoc_accessors(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_AssociatedConformanceDescriptor:
	case SW_DefaultAssociatedConformanceAccessor:
		sw_put(pr, nd->kind == SW_AssociatedConformanceDescriptor
				   ? "associated conformance descriptor for "
				   : "default associated conformance accessor for ");
		print_pair(pr, nd, depth, "", 0, ".", 1);
		sw_put(pr, ": ");
		kid(pr, nd, 2, depth);
		return true;
	case SW_AssociatedTypeMetadataAccessor:
		print_pair(pr, nd, depth, "associated type metadata accessor for ", 1, " in ", 0);
		return true;
	case SW_BaseConformanceDescriptor:
		print_pair(pr, nd, depth, "base conformance descriptor for ", 0, ": ", 1);
		return true;
	case SW_AssociatedTypeWitnessTableAccessor:
		print_pair(pr, nd, depth, "associated type witness table accessor for ", 1, " : ",
			   2);
		sw_put(pr, " in ");
		kid(pr, nd, 0, depth);
		return true;
	case SW_BaseWitnessTableAccessor:
		print_pair(pr, nd, depth, "base witness table accessor for ", 1, " in ", 0);
		return true;
	default: return false;
	}
}

/* ---- SIL parts ---- */

static void print_impl_param(sw_printer *pr, sw_node *nd, int depth)
{
	kid(pr, nd, 0, depth);
	sw_putc(pr, ' ');
	if (nd->nkids == 3)
		kid(pr, nd, 1, depth);
	if (nd->nkids == 4) {
		kid(pr, nd, 1, depth);
		kid(pr, nd, 2, depth);
	}
	kid(pr, nd, nd->nkids - 1, depth);
}

static void print_sil_box(sw_printer *pr, sw_node *nd, int depth)
{
	sw_node *args = NULL;
	if (nd->nkids == 3) {
		kid(pr, nd, 1, depth);
		sw_putc(pr, ' ');
		args = nd->kids[2];
	}
	kid(pr, nd, 0, depth);
	if (args) {
		sw_put(pr, " <");
		sw_print_kids(pr, args, depth, ", ");
		sw_putc(pr, '>');
	}
}

static void print_sil_layout(sw_printer *pr, sw_node *nd, int depth)
{
	sw_putc(pr, '{');
	for (uint32_t i = 0; i < nd->nkids; i++) {
		if (i)
			sw_putc(pr, ',');
		sw_putc(pr, ' ');
		kid(pr, nd, i, depth);
	}
	sw_put(pr, " }");
}

static void print_impl_convention(sw_printer *pr, sw_node *nd, int depth)
{
	sw_put(pr, "@convention(");
	put_text(pr, sw_kid(nd, 0));
	if (nd->nkids == 2) {
		sw_put(pr, ", mangledCType: \"");
		kid(pr, nd, 1, depth);
		sw_putc(pr, '"');
	}
	sw_putc(pr, ')');
}

static bool print_sil(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_ImplParameter:
	case SW_ImplResult: print_impl_param(pr, nd, depth); return true;
	case SW_ImplErrorResult:
		sw_put(pr, "@error ");
		sw_print_kids(pr, nd, depth, " ");
		return true;
	case SW_ImplYield:
		sw_put(pr, "@yields ");
		sw_print_kids(pr, nd, depth, " ");
		return true;
	case SW_ImplCoroutineKind:
		if (nd->text_len) {
			sw_putc(pr, '@');
			put_text(pr, nd);
		}
		return true;
	case SW_ImplParameterResultDifferentiability:
	case SW_ImplParameterSending:
	case SW_ImplParameterIsolated:
	case SW_ImplParameterImplicitLeading:
		if (nd->text_len) {
			put_text(pr, nd);
			sw_putc(pr, ' ');
		}
		return true;
	case SW_ImplFunctionConvention: print_impl_convention(pr, nd, depth); return true;
	case SW_ImplInvocationSubstitutions:
		sw_put(pr, "for <");
		sw_print_kids(pr, sw_kid(nd, 0), depth, ", ");
		sw_putc(pr, '>');
		return true;
	case SW_ImplPatternSubstitutions:
		print_pair(pr, nd, depth, "@substituted ", 0, " for <", 1);
		sw_putc(pr, '>');
		return true;
	case SW_SILBoxTypeWithLayout: print_sil_box(pr, nd, depth); return true;
	case SW_SILBoxLayout: print_sil_layout(pr, nd, depth); return true;
	case SW_SILBoxImmutableField:
	case SW_SILBoxMutableField:
		sw_put(pr, nd->kind == SW_SILBoxImmutableField ? "let " : "var ");
		kid(pr, nd, 0, depth);
		return true;
	default: return false;
	}
}

/* ---- the rest ---- */

static void print_value_witness(sw_printer *pr, sw_node *nd, int depth)
{
	static const char *const names[] = {
		"allocateBuffer",
		"assignWithCopy",
		"assignWithTake",
		"deallocateBuffer",
		"destroy",
		"destroyBuffer",
		"destroyArray",
		"initializeBufferWithCopyOfBuffer",
		"initializeBufferWithCopy",
		"initializeWithCopy",
		"initializeBufferWithTake",
		"initializeWithTake",
		"projectBuffer",
		"initializeBufferWithTakeOfBuffer",
		"initializeArrayWithCopy",
		"initializeArrayWithTakeFrontToBack",
		"initializeArrayWithTakeBackToFront",
		"storeExtraInhabitant",
		"getExtraInhabitantIndex",
		"getEnumTag",
		"destructiveProjectEnumData",
		"destructiveInjectEnumTag",
		"getEnumTagSinglePayload",
		"storeEnumTagSinglePayload",
	};
	uint64_t i = sw_kid(nd, 0) ? nd->kids[0]->index : 0;
	if (i >= sizeof names / sizeof names[0]) {
		pr->invalid = true;
		return;
	}
	sw_put(pr, names[i]);
	sw_put(pr, pr->opt.short_value_witness ? " for " : " value witness for ");
	kid(pr, nd, 1, depth);
}

static void print_anonymous_context(sw_printer *pr, sw_node *nd, int depth)
{
	if (!pr->opt.qualify || !pr->opt.ext_contexts)
		return;
	print_pair(pr, nd, depth, "", 1, ".(unknown context at ", 0);
	sw_putc(pr, ')');
	if (nd->nkids >= 3 && nd->kids[2]->nkids) {
		sw_putc(pr, '<');
		kid(pr, nd, 2, depth);
		sw_putc(pr, '>');
	}
}

static void print_extension(sw_printer *pr, sw_node *nd, int depth)
{
	if (pr->opt.qualify && pr->opt.ext_contexts) {
		sw_put(pr, "(extension in ");
		sw_print(pr, sw_kid(nd, 0), depth + 1, true);
		sw_put(pr, "):");
	}
	kid(pr, nd, 1, depth);
	if (nd->nkids == 3 && !pr->opt.for_type_name)
		kid(pr, nd, 2, depth);
}

static void print_global_once(sw_printer *pr, sw_node *nd, int depth)
{
	if (nd->kind == SW_GlobalVariableOnceDeclList) {
		if (nd->nkids == 1) {
			kid(pr, nd, 0, depth);
			return;
		}
		sw_putc(pr, '(');
		sw_print_kids(pr, nd, depth, ", ");
		sw_putc(pr, ')');
		return;
	}
	sw_put(pr, nd->kind == SW_GlobalVariableOnceToken
			   ? "one-time initialization token for "
			   : "one-time initialization function for ");
	kid(pr, nd, 1, depth);
}

static void print_objc_completion(sw_printer *pr, sw_node *nd, int depth)
{
	if (nd->kind == SW_CheckedObjCAsyncCompletionHandlerImpl)
		sw_put(pr, "checked ");
	sw_put(pr, "@objc completion handler block implementation for ");
	if (nd->nkids >= 4)
		kid(pr, nd, 3, depth);
	print_pair(pr, nd, depth, "", 0, " with result type ", 1);
	switch (sw_kid(nd, 2) ? nd->kids[2]->index : 0) {
	case 0: break;
	case 1: sw_put(pr, " nonzero on error"); break;
	case 2: sw_put(pr, " zero on error"); break;
	default: sw_put(pr, " <invalid error flag>"); break;
	}
}

static void print_quoted(sw_printer *pr, const sw_node *nd)
{
	static const char hex[] = "0123456789ABCDEF";
	sw_putc(pr, '"');
	for (uint32_t i = 0; i < nd->text_len; i++) {
		unsigned char c = (unsigned char)nd->text[i];
		switch (c) {
		case '\\': sw_put(pr, "\\\\"); break;
		case '\t': sw_put(pr, "\\t"); break;
		case '\n': sw_put(pr, "\\n"); break;
		case '\r': sw_put(pr, "\\r"); break;
		case '"': sw_put(pr, "\\\""); break;
		default:
			if (c < 0x20 || c >= 0x7f) {
				sw_put(pr, "\\x");
				sw_putc(pr, hex[c >> 4]);
				sw_putc(pr, hex[c & 15]);
			} else {
				sw_putc(pr, (char)c);
			}
		}
	}
	sw_putc(pr, '"');
}

static void print_macro_loc(sw_printer *pr, sw_node *nd, int depth)
{
	static const char *const parts[] = {"module ", " file ", " line ", " column "};
	for (uint32_t i = 0; i < nd->nkids && i < 4; i++) {
		sw_put(pr, parts[i]);
		kid(pr, nd, i, depth);
	}
}

static void print_resume_partial(sw_printer *pr, sw_node *nd, int depth)
{
	if (!pr->opt.async_resume_partial)
		return;
	sw_putc(pr, '(');
	kid(pr, nd, 0, depth);
	sw_putc(pr, ')');
	sw_put(pr, nd->kind == SW_AsyncAwaitResumePartialFunction
			   ? " await resume partial function for "
			   : " suspend resume partial function for ");
}

static void print_existential_shape(sw_printer *pr, sw_node *nd, int depth)
{
	bool saved = pr->opt.where_clauses;
	pr->opt.where_clauses = true;
	sw_put(pr, "existential shape for ");
	if (nd->nkids == 2) {
		kid(pr, nd, 0, depth);
		sw_putc(pr, ' ');
	}
	sw_put(pr, "any ");
	kid(pr, nd, nd->nkids - 1, depth);
	pr->opt.where_clauses = saved;
}

static bool print_other(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_ValueWitness: print_value_witness(pr, nd, depth); return true;
	case SW_AnonymousContext: print_anonymous_context(pr, nd, depth); return true;
	case SW_Extension: print_extension(pr, nd, depth); return true;
	case SW_GlobalVariableOnceToken:
	case SW_GlobalVariableOnceFunction:
	case SW_GlobalVariableOnceDeclList: print_global_once(pr, nd, depth); return true;
	case SW_ObjCAsyncCompletionHandlerImpl:
	case SW_CheckedObjCAsyncCompletionHandlerImpl:
		print_objc_completion(pr, nd, depth);
		return true;
	case SW_MacroExpansionLoc: print_macro_loc(pr, nd, depth); return true;
	case SW_AsyncAwaitResumePartialFunction:
	case SW_AsyncSuspendResumePartialFunction: print_resume_partial(pr, nd, depth); return true;
	case SW_ExtendedExistentialTypeShape: print_existential_shape(pr, nd, depth); return true;
	case SW_Directness: sw_put(pr, nd->index ? "indirect " : "direct "); return true;
	case SW_FieldOffset:
		kid(pr, nd, 0, depth);
		sw_put(pr, "field offset for ");
		kid(pr, nd, 1, depth);
		return true;
	default: return false;
	}
}

static bool print_simple_globals(sw_printer *pr, sw_node *nd, int depth)
{
	switch (nd->kind) {
	case SW_Global: sw_print_kids(pr, nd, depth, NULL); return true;
	case SW_Suffix:
		if (pr->opt.unmangled_suffix) {
			sw_put(pr, " with unmangled suffix ");
			print_quoted(pr, nd);
		}
		return true;
	case SW_TypeMangling:
		if (sw_kid(nd, 0) && nd->kids[0]->kind == SW_LabelList)
			sw_print_function_type(pr, nd->kids[0], sw_kid(sw_kid(nd, 1), 0), depth);
		else
			kid(pr, nd, 0, depth);
		return true;
	case SW_OutlinedBridgedMethod:
		sw_put(pr, "outlined bridged method (");
		put_text(pr, nd);
		sw_put(pr, ") of ");
		return true;
	case SW_OutlinedVariable:
	case SW_OutlinedReadOnlyObject:
		sw_put(pr, nd->kind == SW_OutlinedVariable ? "outlined variable #"
							   : "outlined read-only object #");
		sw_put_u64(pr, nd->index);
		sw_put(pr, " of ");
		return true;
	case SW_GenericSpecializationParam: print_spec_param(pr, nd, depth); return true;
	case SW_FunctionSignatureSpecializationParamKind:
		print_param_kind(pr, nd->index);
		return true;
	case SW_FunctionSignatureSpecializationParamPayload:
		if (nd->payload == SW_PAY_TEXT)
			put_text(pr, nd);
		else
			sw_put_u64(pr, nd->index);
		return true;
	case SW_DroppedArgument:
		sw_put(pr, "param");
		sw_put_u64(pr, nd->index);
		sw_put(pr, "-removed");
		return true;
	default: return false;
	}
}

bool sw_print_misc_kinds(sw_printer *pr, sw_node *nd, int depth)
{
	return print_simple_globals(pr, nd, depth) || print_specializations(pr, nd, depth) ||
	       print_thunks(pr, nd, depth) || print_autodiff(pr, nd, depth) ||
	       print_conformances(pr, nd, depth) || print_assoc_accessors(pr, nd, depth) ||
	       print_sil(pr, nd, depth) || print_other(pr, nd, depth);
}
