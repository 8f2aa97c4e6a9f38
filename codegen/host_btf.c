/* Debug info that the BPF backend turns into .BTF and .BTF.ext: the
 * programs' functions and lines, kfunc prototypes, struct_ops types.
 * (The maps' definitions gpux writes itself: host_btf_maps.c.) */
#include <stdio.h>
#include <string.h>

#include "host_priv.h"

#define DW_ATE_signed 0x05
#define DW_ATE_signed_char 0x06

void hl_btf_init(struct hctx *h)
{
	h->di = LLVMCreateDIBuilder(h->mod);
	const char *name = h->prog->src.name ? h->prog->src.name : "stdin";
	h->di_file = LLVMDIBuilderCreateFile(h->di, name, strlen(name), ".", 1);
	h->di_cu = LLVMDIBuilderCreateCompileUnit(
		h->di, LLVMDWARFSourceLanguageC, h->di_file, "gpux", 4, true,
		"", 0, 0, "", 0, LLVMDWARFEmissionFull, 0, false, false, "", 0,
		"", 0);
	if (!h->big) {
		LLVMAddModuleFlag(h->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version",
				  13, LLVMValueAsMetadata(LLVMConstInt(h->i32, 4, false)));
		h->di_lines = h->di_file;
	} else {
		/* A large program: line info without file or text, and no DWARF.
		 * The BPF backend adds every string of .BTF by a linear search of
		 * those before it: a line's text is a new one (and the file's name
		 * comes after every map's), so line info cost lines x strings.
		 * The empty file, the string at offset 0, has no text to read.
		 * DWARF, which libbpf does not read, is left out by the
		 * AsmPrinter's rule for CodeView without a DWARF version. */
		LLVMAddModuleFlag(h->mod, LLVMModuleFlagBehaviorWarning, "CodeView", 8,
				  LLVMValueAsMetadata(LLVMConstInt(h->i32, 1, false)));
		h->di_lines = LLVMDIBuilderCreateFile(h->di, "", 0, "", 0);
	}
	LLVMAddModuleFlag(h->mod, LLVMModuleFlagBehaviorWarning,
			  "Debug Info Version", 18,
			  LLVMValueAsMetadata(LLVMConstInt(
				  h->i32, LLVMDebugMetadataVersion(), false)));
	h->di_long = LLVMDIBuilderCreateBasicType(h->di, "long", 4, 64,
						  DW_ATE_signed, LLVMDIFlagZero);
	h->di_voidp = LLVMDIBuilderCreatePointerType(h->di, NULL, 64, 64, 0, "", 0);
}

static void attach_dbg(struct hctx *h, LLVMValueRef g, const char *name,
		       LLVMMetadataRef ty)
{
	LLVMMetadataRef expr = LLVMDIBuilderCreateExpression(h->di, NULL, 0);
	LLVMMetadataRef gve = LLVMDIBuilderCreateGlobalVariableExpression(
		h->di, h->di_cu, name, strlen(name), name, strlen(name),
		h->di_file, 0, ty, false, expr, NULL, 64);
	LLVMGlobalSetMetadata(g, LLVMGetMDKindIDInContext(h->ctx, "dbg", 3), gve);
}

/* long NAME(void *, ...): programs take the context; kfunc declarations
 * get their prototype so that libbpf can match them to the kernel's. */
LLVMMetadataRef hl_btf_func(struct hctx *h, LLVMValueRef fn, const char *name,
			 int nparams, bool definition, unsigned line)
{
	LLVMMetadataRef types[4] = { h->di_long };
	for (int i = 0; i < nparams && i < 3; i++)
		types[i + 1] = h->di_voidp;
	LLVMMetadataRef ft = LLVMDIBuilderCreateSubroutineType(
		h->di, h->di_file, types, (unsigned)nparams + 1, LLVMDIFlagPrototyped);
	/* a program's lines are in its subprogram's file */
	LLVMMetadataRef file = definition ? h->di_lines : h->di_file;
	LLVMMetadataRef sp = LLVMDIBuilderCreateFunction(
		h->di, file, name, strlen(name), name, strlen(name),
		file, line, ft, false, definition, line,
		LLVMDIFlagPrototyped, true);
	LLVMSetSubprogram(fn, sp);
	/* the kernel wants every FUNC argument named in BTF */
	for (int i = 0; i < nparams && i < 3; i++) {
		char an[8];
		int n = snprintf(an, sizeof(an), i ? "arg%d" : "ctx", i);
		LLVMDIBuilderCreateParameterVariable(h->di, sp, an, (size_t)n,
						     (unsigned)i + 1, h->di_file, line,
						     h->di_voidp, true, LLVMDIFlagZero);
	}
	/* a declaration is not finalized with the builder: resolve it now */
	if (!definition)
		LLVMDIBuilderFinalizeSubprogram(h->di, sp);
	return sp;
}

/* libbpf checks an extern kfunc against the kernel's prototype: void
 * matches only void, a pointer only a pointer to the same kind of type
 * (a struct of the same name, members unchecked), integers any integer. */
void hl_btf_kfunc(struct hctx *h, LLVMValueRef fn, const struct host_sops_kfunc *k)
{
	LLVMMetadataRef types[4] = { k->ret_void ? NULL : h->di_long };
	int n = k->nargs < 3 ? k->nargs : 3;
	for (int i = 0; i < n; i++) {
		const char *s = k->ptr_to[i];
		LLVMMetadataRef st = s && *s ? LLVMDIBuilderCreateStructType(
			h->di, h->di_file, s, strlen(s), h->di_file, 0, 0, 64, LLVMDIFlagZero,
			NULL, NULL, 0, 0, NULL, "", 0) : NULL;
		types[i + 1] = !s ? h->di_long
			       : st ? LLVMDIBuilderCreatePointerType(h->di, st, 64, 64, 0, "", 0)
			       : h->di_voidp;
	}
	LLVMMetadataRef ft = LLVMDIBuilderCreateSubroutineType(
		h->di, h->di_file, types, (unsigned)n + 1, LLVMDIFlagPrototyped);
	LLVMMetadataRef sp = LLVMDIBuilderCreateFunction(
		h->di, h->di_file, k->name, strlen(k->name), k->name, strlen(k->name),
		h->di_file, 0, ft, false, false, 0, LLVMDIFlagPrototyped, true);
	LLVMSetSubprogram(fn, sp);
	for (int i = 0; i < n; i++) {
		char an[8];
		int len = snprintf(an, sizeof(an), "arg%d", i);
		LLVMDIBuilderCreateParameterVariable(h->di, sp, an, (size_t)len, (unsigned)i + 1,
						     h->di_file, 0, types[i + 1], true, LLVMDIFlagZero);
	}
	LLVMDIBuilderFinalizeSubprogram(h->di, sp);
}

/* struct STRUCT_NAME { long (*member)(void *); ... } var SEC(".struct_ops").
 * The type's name is what libbpf looks up in the driver's BTF at load. */
void hl_btf_struct_ops(struct hctx *h, LLVMValueRef g, const char *var,
		    const struct host_sops_abi *abi)
{
	/* int, as the driver's hooks return: libbpf also needs a 32-bit
	 * int in the object's BTF to stand for its kfunc externs (its
	 * "dummy_ksym"), and a program's own types are all 64-bit */
	LLVMMetadataRef di_int = LLVMDIBuilderCreateBasicType(h->di, "int", 3, 32,
							      DW_ATE_signed,
							      LLVMDIFlagZero);
	LLVMMetadataRef types[2] = { di_int, h->di_voidp };
	LLVMMetadataRef ft = LLVMDIBuilderCreateSubroutineType(
		h->di, h->di_file, types, 2, LLVMDIFlagPrototyped);
	LLVMMetadataRef fp = LLVMDIBuilderCreatePointerType(h->di, ft, 64, 64, 0,
							    "", 0);
	int n = 0;
	while (abi->members[n])
		n++;
	LLVMMetadataRef members[32];
	for (int i = 0; i < n && i < 32; i++)
		members[i] = LLVMDIBuilderCreateMemberType(
			h->di, h->di_file, abi->members[i], strlen(abi->members[i]),
			h->di_file, 0, 64, 64, (uint64_t)i * 64, LLVMDIFlagZero, fp);
	const char *sn = abi->struct_name;
	LLVMMetadataRef st = LLVMDIBuilderCreateStructType(
		h->di, h->di_file, sn, strlen(sn), h->di_file, 0, (uint64_t)n * 64,
		64, LLVMDIFlagZero, NULL, members, (unsigned)(n < 32 ? n : 32), 0,
		NULL, "", 0);
	attach_dbg(h, g, var, st);
}
