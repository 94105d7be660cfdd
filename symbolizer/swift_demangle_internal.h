/*
 * swift_demangle_internal.h — what the Swift demangler's files share: the
 * node kinds (named as in Swift's DemangleNodes.def so the two can be read
 * side by side), the node tree, the per-call arena, the parser's state and
 * the printer's options. Not part of the symbolizer's interface.
 *
 * Memory: every node, child array and synthesized string lives in one
 * sw_arena owned by the sym_swift_demangle call that made it; nothing here
 * is freed on its own. Text payloads either point into the mangled name
 * (which outlives the arena) or into the arena.
 */
#ifndef STALLSCOPE_SYMBOLIZER_SWIFT_DEMANGLE_INTERNAL_H
#define STALLSCOPE_SYMBOLIZER_SWIFT_DEMANGLE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* X(name): every node kind. Context kinds (can hold a named child) are
 * listed by sw_is_context(). */
#define SW_KINDS(X)                                                                                \
	X(Allocator)                                                                               \
	X(AnonymousContext)                                                                        \
	X(AnyProtocolConformanceList)                                                              \
	X(ArgumentTuple)                                                                           \
	X(AssociatedType)                                                                          \
	X(AssociatedTypeRef)                                                                       \
	X(AssociatedTypeMetadataAccessor)                                                          \
	X(DefaultAssociatedTypeMetadataAccessor)                                                   \
	X(AccessorAttachedMacroExpansion)                                                          \
	X(AssociatedTypeWitnessTableAccessor)                                                      \
	X(BaseWitnessTableAccessor)                                                                \
	X(AutoClosureType)                                                                         \
	X(BodyAttachedMacroExpansion)                                                              \
	X(BoundGenericClass)                                                                       \
	X(BoundGenericEnum)                                                                        \
	X(BoundGenericStructure)                                                                   \
	X(BoundGenericProtocol)                                                                    \
	X(BoundGenericOtherNominalType)                                                            \
	X(BoundGenericTypeAlias)                                                                   \
	X(BoundGenericFunction)                                                                    \
	X(BuiltinTypeName)                                                                         \
	X(BuiltinTupleType)                                                                        \
	X(BuiltinFixedArray)                                                                       \
	X(BuiltinBorrow)                                                                           \
	X(CFunctionPointer)                                                                        \
	X(ClangType)                                                                               \
	X(Class)                                                                                   \
	X(ClassMetadataBaseOffset)                                                                 \
	X(ConcreteProtocolConformance)                                                             \
	X(PackProtocolConformance)                                                                 \
	X(ConformanceAttachedMacroExpansion)                                                       \
	X(Constructor)                                                                             \
	X(CoroutineContinuationPrototype)                                                          \
	X(Deallocator)                                                                             \
	X(DeclContext)                                                                             \
	X(DefaultArgumentInitializer)                                                              \
	X(DependentAssociatedConformance)                                                          \
	X(DependentAssociatedTypeRef)                                                              \
	X(DependentGenericConformanceRequirement)                                                  \
	X(DependentGenericParamCount)                                                              \
	X(DependentGenericParamType)                                                               \
	X(DependentGenericSameTypeRequirement)                                                     \
	X(DependentGenericSameShapeRequirement)                                                    \
	X(DependentGenericLayoutRequirement)                                                       \
	X(DependentGenericParamPackMarker)                                                         \
	X(DependentGenericSignature)                                                               \
	X(DependentGenericType)                                                                    \
	X(DependentMemberType)                                                                     \
	X(DependentPseudogenericSignature)                                                         \
	X(DependentProtocolConformanceRoot)                                                        \
	X(DependentProtocolConformanceInherited)                                                   \
	X(DependentProtocolConformanceAssociated)                                                  \
	X(DependentProtocolConformanceOpaque)                                                      \
	X(Destructor)                                                                              \
	X(DidSet)                                                                                  \
	X(Directness)                                                                              \
	X(DistributedThunk)                                                                        \
	X(DistributedAccessor)                                                                     \
	X(DynamicAttribute)                                                                        \
	X(DirectMethodReferenceAttribute)                                                          \
	X(DynamicSelf)                                                                             \
	X(DynamicallyReplaceableFunctionImpl)                                                      \
	X(DynamicallyReplaceableFunctionKey)                                                       \
	X(DynamicallyReplaceableFunctionVar)                                                       \
	X(Enum)                                                                                    \
	X(EnumCase)                                                                                \
	X(ErrorType)                                                                               \
	X(EscapingAutoClosureType)                                                                 \
	X(NoEscapeFunctionType)                                                                    \
	X(ConcurrentFunctionType)                                                                  \
	X(GlobalActorFunctionType)                                                                 \
	X(DifferentiableFunctionType)                                                              \
	X(ExistentialMetatype)                                                                     \
	X(ExplicitClosure)                                                                         \
	X(Extension)                                                                               \
	X(ExtensionAttachedMacroExpansion)                                                         \
	X(FieldOffset)                                                                             \
	X(FreestandingMacroExpansion)                                                              \
	X(FullTypeMetadata)                                                                        \
	X(Function)                                                                                \
	X(FunctionSignatureSpecialization)                                                         \
	X(FunctionSignatureSpecializationParam)                                                    \
	X(FunctionSignatureSpecializationReturn)                                                   \
	X(FunctionSignatureSpecializationParamKind)                                                \
	X(FunctionSignatureSpecializationParamPayload)                                             \
	X(FunctionType)                                                                            \
	X(ConstrainedExistential)                                                                  \
	X(ConstrainedExistentialRequirementList)                                                   \
	X(ConstrainedExistentialSelf)                                                              \
	X(GenericPartialSpecialization)                                                            \
	X(GenericPartialSpecializationNotReAbstracted)                                             \
	X(GenericProtocolWitnessTable)                                                             \
	X(GenericProtocolWitnessTableInstantiationFunction)                                        \
	X(ResilientProtocolWitnessTable)                                                           \
	X(GenericSpecialization)                                                                   \
	X(GenericSpecializationNotReAbstracted)                                                    \
	X(GenericSpecializationInResilienceDomain)                                                 \
	X(GenericSpecializationParam)                                                              \
	X(GenericSpecializationPrespecialized)                                                     \
	X(InlinedGenericFunction)                                                                  \
	X(GenericTypeMetadataPattern)                                                              \
	X(Getter)                                                                                  \
	X(Global)                                                                                  \
	X(GlobalGetter)                                                                            \
	X(Identifier)                                                                              \
	X(Index)                                                                                   \
	X(IVarInitializer)                                                                         \
	X(IVarDestroyer)                                                                           \
	X(ImplEscaping)                                                                            \
	X(ImplConvention)                                                                          \
	X(ImplDifferentiabilityKind)                                                               \
	X(ImplErasedIsolation)                                                                     \
	X(ImplNonisolatedNonsendingIsolation)                                                      \
	X(ImplCalledOnceFunction)                                                                  \
	X(ImplSendingResult)                                                                       \
	X(ImplParameterResultDifferentiability)                                                    \
	X(ImplParameterSending)                                                                    \
	X(ImplParameterIsolated)                                                                   \
	X(ImplParameterImplicitLeading)                                                            \
	X(ImplFunctionAttribute)                                                                   \
	X(ImplFunctionConvention)                                                                  \
	X(ImplFunctionConventionName)                                                              \
	X(ImplFunctionType)                                                                        \
	X(ImplCoroutineKind)                                                                       \
	X(ImplInvocationSubstitutions)                                                             \
	X(ImplicitClosure)                                                                         \
	X(ImplParameter)                                                                           \
	X(ImplPatternSubstitutions)                                                                \
	X(ImplResult)                                                                              \
	X(ImplYield)                                                                               \
	X(ImplErrorResult)                                                                         \
	X(InOut)                                                                                   \
	X(InfixOperator)                                                                           \
	X(Initializer)                                                                             \
	X(InitAccessor)                                                                            \
	X(Isolated)                                                                                \
	X(IsolatedDeallocator)                                                                     \
	X(Sending)                                                                                 \
	X(IsolatedAnyFunctionType)                                                                 \
	X(NonIsolatedCallerFunctionType)                                                           \
	X(CalledOnceFunctionType)                                                                  \
	X(SendingResultFunctionType)                                                               \
	X(KeyPathGetterThunkHelper)                                                                \
	X(KeyPathSetterThunkHelper)                                                                \
	X(KeyPathUnappliedMethodThunkHelper)                                                       \
	X(KeyPathAppliedMethodThunkHelper)                                                         \
	X(KeyPathEqualsThunkHelper)                                                                \
	X(KeyPathHashThunkHelper)                                                                  \
	X(LazyProtocolWitnessTableAccessor)                                                        \
	X(LazyProtocolWitnessTableCacheVariable)                                                   \
	X(LocalDeclName)                                                                           \
	X(Macro)                                                                                   \
	X(MacroExpansionLoc)                                                                       \
	X(MacroExpansionUniqueName)                                                                \
	X(MaterializeForSet)                                                                       \
	X(MemberAttachedMacroExpansion)                                                            \
	X(MemberAttributeAttachedMacroExpansion)                                                   \
	X(MergedFunction)                                                                          \
	X(Metatype)                                                                                \
	X(MetatypeRepresentation)                                                                  \
	X(Metaclass)                                                                               \
	X(MethodLookupFunction)                                                                    \
	X(ObjCMetadataUpdateFunction)                                                              \
	X(ObjCResilientClassStub)                                                                  \
	X(FullObjCResilientClassStub)                                                              \
	X(ModifyAccessor)                                                                          \
	X(YieldingMutateAccessor)                                                                  \
	X(Module)                                                                                  \
	X(NativeOwningAddressor)                                                                   \
	X(NativeOwningMutableAddressor)                                                            \
	X(NativePinningAddressor)                                                                  \
	X(NativePinningMutableAddressor)                                                           \
	X(NominalTypeDescriptor)                                                                   \
	X(NominalTypeDescriptorRecord)                                                             \
	X(NonObjCAttribute)                                                                        \
	X(Number)                                                                                  \
	X(ObjCAsyncCompletionHandlerImpl)                                                          \
	X(CheckedObjCAsyncCompletionHandlerImpl)                                                   \
	X(ObjCAttribute)                                                                           \
	X(ObjCBlock)                                                                               \
	X(EscapingObjCBlock)                                                                       \
	X(OtherNominalType)                                                                        \
	X(OwningAddressor)                                                                         \
	X(OwningMutableAddressor)                                                                  \
	X(PartialApplyForwarder)                                                                   \
	X(PartialApplyObjCForwarder)                                                               \
	X(PeerAttachedMacroExpansion)                                                              \
	X(PostfixOperator)                                                                         \
	X(PreambleAttachedMacroExpansion)                                                          \
	X(PrefixOperator)                                                                          \
	X(PrivateDeclName)                                                                         \
	X(PropertyDescriptor)                                                                      \
	X(PropertyWrapperBackingInitializer)                                                       \
	X(PropertyWrappedFieldInitAccessor)                                                        \
	X(PropertyWrapperInitFromProjectedValue)                                                   \
	X(Protocol)                                                                                \
	X(ProtocolConformance)                                                                     \
	X(ProtocolConformanceRefInTypeModule)                                                      \
	X(ProtocolConformanceRefInProtocolModule)                                                  \
	X(ProtocolConformanceRefInOtherModule)                                                     \
	X(ProtocolDescriptor)                                                                      \
	X(ProtocolDescriptorRecord)                                                                \
	X(ProtocolConformanceDescriptor)                                                           \
	X(ProtocolConformanceDescriptorRecord)                                                     \
	X(ProtocolList)                                                                            \
	X(ProtocolListWithClass)                                                                   \
	X(ProtocolListWithAnyObject)                                                               \
	X(ProtocolSelfConformanceDescriptor)                                                       \
	X(ProtocolSelfConformanceWitness)                                                          \
	X(ProtocolSelfConformanceWitnessTable)                                                     \
	X(ProtocolWitness)                                                                         \
	X(ProtocolWitnessTable)                                                                    \
	X(ProtocolWitnessTableAccessor)                                                            \
	X(ProtocolWitnessTablePattern)                                                             \
	X(ReabstractionThunk)                                                                      \
	X(ReabstractionThunkHelper)                                                                \
	X(ReabstractionThunkHelperWithSelf)                                                        \
	X(ReabstractionThunkHelperWithGlobalActor)                                                 \
	X(ReadAccessor)                                                                            \
	X(YieldingBorrowAccessor)                                                                  \
	X(RelatedEntityDeclName)                                                                   \
	X(RetroactiveConformance)                                                                  \
	X(ReturnType)                                                                              \
	X(Shared)                                                                                  \
	X(Owned)                                                                                   \
	X(SILBoxType)                                                                              \
	X(SILBoxTypeWithLayout)                                                                    \
	X(SILBoxLayout)                                                                            \
	X(SILBoxMutableField)                                                                      \
	X(SILBoxImmutableField)                                                                    \
	X(Setter)                                                                                  \
	X(SpecializationPassID)                                                                    \
	X(IsSerialized)                                                                            \
	X(Static)                                                                                  \
	X(Structure)                                                                               \
	X(Subscript)                                                                               \
	X(Suffix)                                                                                  \
	X(ThinFunctionType)                                                                        \
	X(Tuple)                                                                                   \
	X(TupleElement)                                                                            \
	X(TupleElementName)                                                                        \
	X(Pack)                                                                                    \
	X(SILPackDirect)                                                                           \
	X(SILPackIndirect)                                                                         \
	X(PackExpansion)                                                                           \
	X(PackElement)                                                                             \
	X(PackElementLevel)                                                                        \
	X(Type)                                                                                    \
	X(TypeAlias)                                                                               \
	X(TypeList)                                                                                \
	X(TypeMangling)                                                                            \
	X(TypeMetadata)                                                                            \
	X(TypeMetadataAccessFunction)                                                              \
	X(TypeMetadataCompletionFunction)                                                          \
	X(TypeMetadataInstantiationCache)                                                          \
	X(TypeMetadataInstantiationFunction)                                                       \
	X(TypeMetadataSingletonInitializationCache)                                                \
	X(TypeMetadataDemanglingCache)                                                             \
	X(TypeMetadataLazyCache)                                                                   \
	X(UncurriedFunctionType)                                                                   \
	X(UnknownIndex)                                                                            \
	X(UnsafeAddressor)                                                                         \
	X(UnsafeMutableAddressor)                                                                  \
	X(ValueWitness)                                                                            \
	X(ValueWitnessTable)                                                                       \
	X(Variable)                                                                                \
	X(VTableThunk)                                                                             \
	X(WillSet)                                                                                 \
	X(ReflectionMetadataBuiltinDescriptor)                                                     \
	X(ReflectionMetadataFieldDescriptor)                                                       \
	X(ReflectionMetadataAssocTypeDescriptor)                                                   \
	X(ReflectionMetadataSuperclassDescriptor)                                                  \
	X(GenericTypeParamDecl)                                                                    \
	X(CurryThunk)                                                                              \
	X(SILThunkIdentity)                                                                        \
	X(DispatchThunk)                                                                           \
	X(MethodDescriptor)                                                                        \
	X(ProtocolRequirementsBaseDescriptor)                                                      \
	X(AssociatedConformanceDescriptor)                                                         \
	X(DefaultAssociatedConformanceAccessor)                                                    \
	X(BaseConformanceDescriptor)                                                               \
	X(AssociatedTypeDescriptor)                                                                \
	X(AsyncAnnotation)                                                                         \
	X(ThrowsAnnotation)                                                                        \
	X(TypedThrowsAnnotation)                                                                   \
	X(EmptyList)                                                                               \
	X(FirstElementMarker)                                                                      \
	X(VariadicMarker)                                                                          \
	X(OutlinedBridgedMethod)                                                                   \
	X(OutlinedCopy)                                                                            \
	X(OutlinedConsume)                                                                         \
	X(OutlinedRetain)                                                                          \
	X(OutlinedRelease)                                                                         \
	X(OutlinedInitializeWithTake)                                                              \
	X(OutlinedInitializeWithCopy)                                                              \
	X(OutlinedAssignWithTake)                                                                  \
	X(OutlinedAssignWithCopy)                                                                  \
	X(OutlinedDestroy)                                                                         \
	X(OutlinedVariable)                                                                        \
	X(OutlinedReadOnlyObject)                                                                  \
	X(AssocTypePath)                                                                           \
	X(LabelList)                                                                               \
	X(ModuleDescriptor)                                                                        \
	X(ExtensionDescriptor)                                                                     \
	X(AnonymousDescriptor)                                                                     \
	X(AssociatedTypeGenericParamRef)                                                           \
	X(SugaredOptional)                                                                         \
	X(SugaredArray)                                                                            \
	X(SugaredDictionary)                                                                       \
	X(SugaredInlineArray)                                                                      \
	X(SugaredParen)                                                                            \
	X(OpaqueType)                                                                              \
	X(OpaqueTypeDescriptor)                                                                    \
	X(OpaqueTypeDescriptorRecord)                                                              \
	X(OpaqueTypeDescriptorAccessor)                                                            \
	X(OpaqueTypeDescriptorAccessorImpl)                                                        \
	X(OpaqueTypeDescriptorAccessorKey)                                                         \
	X(OpaqueTypeDescriptorAccessorVar)                                                         \
	X(OpaqueReturnType)                                                                        \
	X(OpaqueReturnTypeOf)                                                                      \
	X(CanonicalSpecializedGenericMetaclass)                                                    \
	X(CanonicalSpecializedGenericTypeMetadataAccessFunction)                                   \
	X(MetadataInstantiationCache)                                                              \
	X(NoncanonicalSpecializedGenericTypeMetadata)                                              \
	X(NoncanonicalSpecializedGenericTypeMetadataCache)                                         \
	X(GlobalVariableOnceFunction)                                                              \
	X(GlobalVariableOnceToken)                                                                 \
	X(GlobalVariableOnceDeclList)                                                              \
	X(CanonicalPrespecializedGenericTypeCachingOnceToken)                                      \
	X(AsyncFunctionPointer)                                                                    \
	X(AutoDiffFunction)                                                                        \
	X(AutoDiffFunctionKind)                                                                    \
	X(AutoDiffSelfReorderingReabstractionThunk)                                                \
	X(AutoDiffSubsetParametersThunk)                                                           \
	X(AutoDiffDerivativeVTableThunk)                                                           \
	X(DifferentiabilityWitness)                                                                \
	X(NoDerivative)                                                                            \
	X(IndexSubset)                                                                             \
	X(AsyncAwaitResumePartialFunction)                                                         \
	X(AsyncSuspendResumePartialFunction)                                                       \
	X(AccessibleFunctionRecord)                                                                \
	X(CompileTimeLiteral)                                                                      \
	X(BackDeploymentThunk)                                                                     \
	X(BackDeploymentFallback)                                                                  \
	X(ExtendedExistentialTypeShape)                                                            \
	X(Uniquable)                                                                               \
	X(DroppedArgument)                                                                         \
	X(HasSymbolQuery)                                                                          \
	X(OpaqueReturnTypeIndex)                                                                   \
	X(OutlinedEnumTagStore)                                                                    \
	X(OutlinedEnumProjectDataForLoad)                                                          \
	X(OutlinedEnumGetTag)                                                                      \
	X(AsyncRemoved)                                                                            \
	X(RepresentationChanged)                                                                   \
	X(OutlinedInitializeWithTakeNoValueWitness)                                                \
	X(OutlinedInitializeWithCopyNoValueWitness)                                                \
	X(OutlinedAssignWithTakeNoValueWitness)                                                    \
	X(OutlinedAssignWithCopyNoValueWitness)                                                    \
	X(OutlinedDestroyNoValueWitness)                                                           \
	X(DependentGenericInverseConformanceRequirement)                                           \
	X(Integer)                                                                                 \
	X(NegativeInteger)                                                                         \
	X(DependentGenericParamValueMarker)                                                        \
	X(CoroFunctionPointer)                                                                     \
	X(DefaultOverride)                                                                         \
	X(ConstValue)                                                                              \
	X(BorrowAccessor)                                                                          \
	X(MutateAccessor)                                                                          \
	X(Weak)                                                                                    \
	X(Unowned)                                                                                 \
	X(Unmanaged)

#define SW_KIND_ENUM(name) SW_##name,
typedef enum sw_kind { SW_KINDS(SW_KIND_ENUM) SW_KIND_COUNT } sw_kind;
#undef SW_KIND_ENUM

/* Function signature specialization parameter kinds (Swift's
 * FunctionSigSpecializationParamKind): what the parser reads and the
 * printer names. */
enum {
	FSP_CONST_FUNCTION = 0,
	FSP_CONST_GLOBAL = 1,
	FSP_CONST_INTEGER = 2,
	FSP_CONST_FLOAT = 3,
	FSP_CONST_STRING = 4,
	FSP_CLOSURE = 5,
	FSP_BOX_TO_VALUE = 6,
	FSP_BOX_TO_STACK = 7,
	FSP_INOUT_TO_OUT = 8,
	FSP_CONST_KEYPATH = 9,
	FSP_CONST_STRUCT = 10,
	FSP_CLOSURE_PREV_ARG = 11,
	FSP_ESCAPING_CLOSURE = 12,
	FSP_DEAD = 1 << 6,
	FSP_OWNED_TO_GUARANTEED = 1 << 7,
	FSP_SROA = 1 << 8,
	FSP_GUARANTEED_TO_OWNED = 1 << 9,
	FSP_EXISTENTIAL_TO_GENERIC = 1 << 10,
};

/* What a node carries besides its children. */
enum { SW_PAY_NONE, SW_PAY_TEXT, SW_PAY_INDEX };

typedef struct sw_node sw_node;
struct sw_node {
	sw_node **kids; /* points at inl until a third child arrives */
	const char *text;
	uint64_t index;
	uint32_t text_len;
	uint32_t nkids;
	uint32_t cap;
	uint16_t kind;
	uint8_t payload;
	sw_node *inl[2];
};

/* A chain of malloc'ed blocks with a byte budget: the budget, not the
 * input, decides when an adversarial name gives up. */
typedef struct sw_block sw_block;
typedef struct sw_arena {
	char *cur;
	char *end;
	sw_block *blocks;
	size_t used;
	size_t limit;
} sw_arena;

void *sw_alloc_block(sw_arena *a, size_t n);

/* N bytes, 16-aligned, or NULL past the budget. */
static inline void *sw_alloc(sw_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if ((size_t)(a->end - a->cur) >= n) {
		void *r = a->cur;
		a->cur += n;
		return r;
	}
	return sw_alloc_block(a, n);
}
void sw_arena_free(sw_arena *a);

/* A growable array of node pointers in the arena (the parser's stack and
 * substitution table). */
typedef struct sw_vec {
	sw_node **v;
	size_t n;
	size_t cap;
} sw_vec;

bool sw_vec_grow(sw_arena *a, sw_vec *vec, sw_node *nd);

static inline bool sw_vec_push(sw_arena *a, sw_vec *vec, sw_node *nd)
{
	if (vec->n < vec->cap) {
		vec->v[vec->n++] = nd;
		return true;
	}
	return sw_vec_grow(a, vec, nd);
}

/* The parser's state for one mangled name. The word tables come last: a
 * parse clears only what precedes them (nwords and nunsplit say how much of
 * each is filled). */
typedef struct sw_parser {
	sw_arena *arena;
	const char *text;
	size_t len;
	size_t pos;
	sw_vec stack;
	sw_vec substs;
	int nwords;
	int nunsplit;
	int depth;   /* recursion of the few recursive parse steps */
	bool old;    /* Swift 4 (_T0) function type mangling */
	bool failed; /* out of memory or too deep: the whole parse fails */
	struct {
		const char *p;
		uint32_t n;
	} words[26];
	/* Identifiers not yet split into words: most names never use a word
	 * substitution, so the split waits for the first one that does. */
	struct {
		const char *p;
		int n;
	} unsplit[16];
} sw_parser;

/* Nodes. Every operator makes a few, so making one is inline. */
static inline sw_node *sw_new(sw_parser *p, sw_kind k)
{
	sw_node *nd = sw_alloc(p->arena, sizeof *nd);
	if (!nd) {
		p->failed = true;
		return NULL;
	}
	*nd = (sw_node){.kids = nd->inl, .cap = 2, .kind = (uint16_t)k};
	return nd;
}

static inline sw_node *sw_new_text(sw_parser *p, sw_kind k, const char *s, size_t n)
{
	sw_node *nd = sw_new(p, k);
	if (nd) {
		nd->payload = SW_PAY_TEXT;
		nd->text = s;
		nd->text_len = (uint32_t)n;
	}
	return nd;
}

/* Inline: S is mostly a literal, whose length then folds to a constant. */
static inline sw_node *sw_new_str(sw_parser *p, sw_kind k, const char *s)
{
	return sw_new_text(p, k, s, strlen(s));
}

static inline sw_node *sw_new_index(sw_parser *p, sw_kind k, uint64_t idx)
{
	sw_node *nd = sw_new(p, k);
	if (nd) {
		nd->payload = SW_PAY_INDEX;
		nd->index = idx;
	}
	return nd;
}

bool sw_add_grow(sw_parser *p, sw_node *parent, sw_node *child);

static inline bool sw_add(sw_parser *p, sw_node *parent, sw_node *child)
{
	if (!parent || !child)
		return false;
	if (parent->nkids < parent->cap) {
		parent->kids[parent->nkids++] = child;
		return true;
	}
	return sw_add_grow(p, parent, child);
}

/* Swift's addChild(): the parent, or NULL when either side is missing. */
static inline sw_node *sw_add_ok(sw_parser *p, sw_node *parent, sw_node *child)
{
	return sw_add(p, parent, child) ? parent : NULL;
}

/* A node of kind K over A (and B): none is made when a child is missing. */
static inline sw_node *sw_with1(sw_parser *p, sw_kind k, sw_node *a)
{
	if (!a)
		return NULL;
	return sw_add_ok(p, sw_new(p, k), a);
}

static inline sw_node *sw_with2(sw_parser *p, sw_kind k, sw_node *a, sw_node *b)
{
	if (!a || !b)
		return NULL;
	return sw_add_ok(p, sw_with1(p, k, a), b);
}

sw_node *sw_with3(sw_parser *p, sw_kind k, sw_node *a, sw_node *b, sw_node *c);

static inline sw_node *sw_type(sw_parser *p, sw_node *child)
{
	return sw_with1(p, SW_Type, child);
}

void sw_reverse(sw_node *nd, size_t from);

/* The kind predicates are table lookups: the parser asks them for nearly
 * every node it pops. */
extern const bool sw_context_kinds[SW_KIND_COUNT];
extern const bool sw_decl_name_kinds[SW_KIND_COUNT];

static inline bool sw_is_context(sw_kind k)
{
	return sw_context_kinds[k];
}

/* Inline: S is mostly a literal, whose length then folds to a constant. */
static inline bool sw_text_is(const sw_node *nd, const char *s)
{
	size_t n = strlen(s);
	return nd && nd->payload == SW_PAY_TEXT && nd->text_len == n && memcmp(nd->text, s, n) == 0;
}

/* Reading the mangled text. */
bool sw_next_if_str(sw_parser *p, const char *s);
void sw_push_grow(sw_parser *p, sw_node *nd);

static inline void sw_push(sw_parser *p, sw_node *nd)
{
	if (p->stack.n < p->stack.cap)
		p->stack.v[p->stack.n++] = nd;
	else
		sw_push_grow(p, nd);
}
/* Inline so that PRED, a table lookup, inlines too. */
static inline sw_node *sw_pop_if(sw_parser *p, bool (*pred)(sw_kind))
{
	if (!p->stack.n || !pred((sw_kind)p->stack.v[p->stack.n - 1]->kind))
		return NULL;
	return p->stack.v[--p->stack.n];
}

static inline void sw_add_subst(sw_parser *p, sw_node *nd)
{
	if (nd && !sw_vec_push(p->arena, &p->substs, nd))
		p->failed = true;
}
int sw_natural_long(sw_parser *p, int num);

/* A natural number, or -1000 (Swift's "no number") when there is none or it
 * overflows. Up to 9 digits cannot overflow: only longer numbers take the
 * checked path. */
static inline int sw_natural(sw_parser *p)
{
	size_t pos = p->pos, stop = p->len - pos > 9 ? pos + 9 : p->len;
	if (pos >= stop || (unsigned)(p->text[pos] - '0') > 9)
		return -1000;
	int num = 0;
	unsigned d;
	while (pos < stop && (d = (unsigned)(p->text[pos] - '0')) <= 9) {
		num = num * 10 + (int)d;
		pos++;
	}
	p->pos = pos;
	return pos == stop && stop < p->len ? sw_natural_long(p, num) : num;
}
int sw_index(sw_parser *p);
sw_node *sw_index_node(sw_parser *p);

/* The hottest helpers, inline: every operator reads and pops through them. */
static inline sw_node *sw_kid(const sw_node *nd, size_t i)
{
	return nd && i < nd->nkids ? nd->kids[i] : NULL;
}

static inline char sw_peek(const sw_parser *p)
{
	return p->pos < p->len ? p->text[p->pos] : 0;
}

static inline char sw_next(sw_parser *p)
{
	return p->pos < p->len ? p->text[p->pos++] : 0;
}

static inline bool sw_next_if(sw_parser *p, char c)
{
	if (p->pos >= p->len || p->text[p->pos] != c)
		return false;
	p->pos++;
	return true;
}

static inline sw_node *sw_pop(sw_parser *p)
{
	return p->stack.n ? p->stack.v[--p->stack.n] : NULL;
}

static inline sw_node *sw_pop_kind(sw_parser *p, sw_kind k)
{
	if (!p->stack.n || p->stack.v[p->stack.n - 1]->kind != k)
		return NULL;
	return p->stack.v[--p->stack.n];
}

/* Grammar pieces shared between the parser files. */
sw_node *sw_parse_operator(sw_parser *p);
sw_node *sw_parse_builtin(sw_parser *p);
sw_node *sw_parse_conformance_op(sw_parser *p);
sw_node *sw_parse_bound_generic(sw_parser *p);
sw_node *sw_parse_archetype(sw_parser *p);
sw_node *sw_parse_type_annotation(sw_parser *p);
sw_node *sw_parse_value_witness(sw_parser *p);
sw_node *sw_parse_retroactive(sw_parser *p);
sw_node *sw_parse_protocol_list_type(sw_parser *p);
sw_node *sw_parse_protocol_list(sw_parser *p);
sw_node *sw_parse_integer_type(sw_parser *p);
sw_node *sw_parse_macro_expansion(sw_parser *p);
sw_node *sw_parse_any_generic_other(sw_parser *p);
sw_node *sw_pop_tuple(sw_parser *p);
sw_node *sw_parse_identifier(sw_parser *p);
sw_node *sw_parse_thunk(sw_parser *p);
sw_node *sw_parse_impl_function_type(sw_parser *p);
sw_node *sw_parse_metatype(sw_parser *p);
sw_node *sw_parse_witness(sw_parser *p);
sw_node *sw_parse_special_type(sw_parser *p);
sw_node *sw_parse_requirement(sw_parser *p);
sw_node *sw_parse_generic_signature(sw_parser *p, bool has_counts);
sw_node *sw_pop_type_child(sw_parser *p);
sw_node *sw_pop_protocol(sw_parser *p);
sw_node *sw_pop_conformance(sw_parser *p);
sw_node *sw_pop_any_conformance(sw_parser *p);
sw_node *sw_pop_context(sw_parser *p);
sw_node *sw_pop_module(sw_parser *p);
sw_node *sw_pop_type_list(sw_parser *p);
sw_node *sw_pop_assoc_type_name(sw_parser *p);
sw_node *sw_pop_assoc_type_path(sw_parser *p);
sw_node *sw_pop_function_type(sw_parser *p, sw_kind k, bool clang_type);
sw_node *sw_pop_labels(sw_parser *p, sw_node *type);
sw_node *sw_generic_param(sw_parser *p, int depth, int index);
sw_node *sw_generic_param_index(sw_parser *p);
sw_node *sw_assoc_simple(sw_parser *p, sw_node *base);
sw_node *sw_assoc_compound(sw_parser *p, sw_node *base);
bool sw_bound_generics(sw_parser *p, sw_vec *lists, sw_node **retro);
sw_node *sw_parse_index_subset(sw_parser *p);
static inline bool sw_is_decl_name(sw_kind k)
{
	return sw_decl_name_kinds[k];
}

static inline bool sw_is_entity(sw_kind k)
{
	return k == SW_Type || sw_is_context(k);
}
bool sw_is_protocol_node(const sw_node *nd);
bool sw_punycode_decode(const char *in, size_t n, char *out, size_t cap, size_t *out_len);

/* Parses a whole symbol (prefix already checked) into its Global node. */
sw_node *sw_parse_symbol(sw_parser *p);

/* Printer. */
typedef struct sw_opts {
	bool sugar;
	bool qualify;
	bool ext_contexts;
	bool unmangled_suffix;
	bool module_names;
	bool generic_specializations;
	bool conformances;
	bool where_clauses;
	bool entity_types;
	bool local_contexts;
	bool short_partial_apply;
	bool short_thunk;
	bool short_value_witness;
	bool private_discriminators;
	bool arg_types;
	bool return_type;
	bool async_resume_partial;
	bool closure_signature;
	bool stdlib_module;
	bool objc_module;
	bool for_type_name;
} sw_opts;

typedef struct sw_printer {
	sw_opts opt;
	char *buf;
	size_t len;
	size_t cap;
	size_t visits;
	size_t max_visits;
	sw_arena *arena;
	bool spec_prefix_printed;
	bool invalid;
} sw_printer;

/* Once the text is invalid nothing printed is used, so appending needs
 * only the bounds check. */
static inline void sw_putn(sw_printer *pr, const char *s, size_t n)
{
	if (n > pr->cap - pr->len) {
		pr->invalid = true;
		return;
	}
	char *d = pr->buf + pr->len;
	pr->len += n;
	/* Most pieces are short names: two overlapping word copies cost less
	 * than a call to memcpy, and neither reads past S + N. */
	if (n >= 8 && n <= 16) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else {
		memcpy(d, s, n);
	}
}

/* Inline: S is mostly a literal, whose length then folds to a constant. */
static inline void sw_put(sw_printer *pr, const char *s)
{
	sw_putn(pr, s, strlen(s));
}

static inline void sw_putc(sw_printer *pr, char c)
{
	if (pr->len < pr->cap)
		pr->buf[pr->len++] = c;
	else
		pr->invalid = true;
}
void sw_put_u64(sw_printer *pr, uint64_t v);
sw_node *sw_print(sw_printer *pr, sw_node *nd, int depth, bool as_prefix);
void sw_print_kids_sep(sw_printer *pr, sw_node *nd, int depth, const char *sep, size_t sep_len);

/* The children, SEP (a literal or NULL) between them. */
static inline void sw_print_kids(sw_printer *pr, sw_node *nd, int depth, const char *sep)
{
	sw_print_kids_sep(pr, nd, depth, sep, sep ? strlen(sep) : 0);
}
bool sw_print_misc_kinds(sw_printer *pr, sw_node *nd, int depth);
bool sw_print_entity_kinds(sw_printer *pr, sw_node *nd, int depth, bool as_prefix,
			   sw_node **out_ctx);
/* sw_print_entity_kinds() for a kind known not to be a simple type. */
bool sw_print_entity(sw_printer *pr, sw_node *nd, int depth, bool as_prefix, sw_node **out_ctx);
void sw_print_function_type(sw_printer *pr, sw_node *labels, sw_node *fn, int depth);
void sw_print_impl_function_type(sw_printer *pr, sw_node *fn, int depth);
void sw_print_generic_signature(sw_printer *pr, sw_node *sig, int depth);
void sw_print_spec_prefix(sw_printer *pr, sw_node *nd, const char *desc, int depth,
			  const char *param_prefix);
void sw_print_with_parens(sw_printer *pr, sw_node *type, int depth);
void sw_print_param_name(sw_printer *pr, uint64_t depth, uint64_t index);
bool sw_is_simple_type(const sw_node *nd);

#endif
