# `cpack` (from a build directory): a Debian package of what the install
# rules lay out, under /usr. Its dependencies are dpkg-shlibdeps' reading
# of the binaries (LLVM, libbpf, libelf; libmicrohttpd and libcurl for
# --export). packaging/deb_check.sh installs it in a fresh Debian 12.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpux)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gpux developers <gpux-dev@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "bpftrace-style tracing and policies for GPUs: probes in CUDA kernels, the CUDA API, the GPU driver and the host")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# the runtime and the modules are gpux's own, found beside it
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/cli)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bpftrace, libdw1")
include(CPack)
