# cmake -DIN=helpers.ptx -DOUT=helpers_ptx.c -P embed_ptx.cmake
# Turns the helper library's PTX into a C array, so gpux carries it and
# needs no file at run time. An empty IN gives an empty library.
if(IN AND EXISTS "${IN}")
  file(READ "${IN}" hex HEX)
else()
  set(hex "")
endif()
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE "${OUT}" "/* Generated from the device helper library; do not edit. */\n"
  "#include <stddef.h>\n"
  "#include \"ptx_library.h\"\n"
  "static const char lib[] = {\n${body}0x00 };\n"
  "const char *ptx_helper_library(size_t *len)\n{\n"
  "\t*len = ${len};\n\treturn ${len} ? lib : NULL;\n}\n")
