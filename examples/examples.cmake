# nxrt_add_examples(): one ctest test per example, shared by this build (examples/CMakeLists.txt) and by the
# out-of-tree consumer (examples/consumer/), which builds the same sources against an installed nxrt.
# Expects targets nxrt::nxrt and nxrt::nxrt_cli, and nxrt::nxrt_fortran for the Fortran examples.
#
# examples/<lang>/NAME.* runs on the builtin model whose name NAME starts with ("simple_add_io_binding.c"
# runs on simple_add.onnx), written first by a fixture with `nxrt export-builtin`.
set(NXRT_EXAMPLE_MODELS simple_add mlp)

function(nxrt_example_model name out_var)
  foreach(model IN LISTS NXRT_EXAMPLE_MODELS)
    if(name MATCHES "^${model}")
      set(${out_var} ${model} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "example '${name}' does not start with a builtin model name (${NXRT_EXAMPLE_MODELS})")
endfunction()

# examples_dir: the examples/ source folder; model_dir: where the fixture writes the models.
function(nxrt_add_examples examples_dir model_dir)
  file(MAKE_DIRECTORY ${model_dir})
  foreach(model IN LISTS NXRT_EXAMPLE_MODELS)
    add_test(NAME example_export_${model} COMMAND nxrt::nxrt_cli export-builtin ${model} ${model_dir}/${model}.onnx)
    set_tests_properties(example_export_${model} PROPERTIES FIXTURES_SETUP example_models)
  endforeach()

  file(GLOB c_examples CONFIGURE_DEPENDS ${examples_dir}/c/*.c)
  file(GLOB cpp_examples CONFIGURE_DEPENDS ${examples_dir}/cpp/*.cpp)
  set(fortran_examples)
  if(CMAKE_Fortran_COMPILER AND TARGET nxrt::nxrt_fortran)
    file(GLOB fortran_examples CONFIGURE_DEPENDS ${examples_dir}/fortran/*.f90)
  endif()
  foreach(source IN LISTS c_examples cpp_examples fortran_examples)
    get_filename_component(name ${source} NAME_WE)
    get_filename_component(extension ${source} EXT)
    nxrt_example_model(${name} model)
    if(extension STREQUAL ".c")
      set(target example_c_${name})
      add_executable(${target} ${source})
      # The public header must stay plain C99.
      set_target_properties(${target} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
      target_compile_options(${target} PRIVATE -Wpedantic)
      target_link_libraries(${target} PRIVATE nxrt::nxrt m)
    elseif(extension STREQUAL ".cpp")
      set(target example_cpp_${name})
      add_executable(${target} ${source})
      # nxrt.hpp promises C++17.
      set_target_properties(${target} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
      target_link_libraries(${target} PRIVATE nxrt::nxrt)
    else()
      set(target example_fortran_${name})
      add_executable(${target} ${source})
      target_compile_options(${target} PRIVATE $<$<Fortran_COMPILER_ID:GNU>:-std=f2008>)
      target_link_libraries(${target} PRIVATE nxrt::nxrt_fortran)
    endif()
    add_test(NAME ${target} COMMAND ${target} ${model_dir}/${model}.onnx)
    set_tests_properties(${target} PROPERTIES FIXTURES_REQUIRED example_models)
  endforeach()

  # MPI: only where an MPI implementation with a launcher is found. Open MPI refuses to run as root (CI containers)
  # and more ranks than cores without its flags.
  # Left out of sanitizer builds: OpenMPI's own allocations at exit read as leaks to LeakSanitizer.
  set(MPI_DETERMINE_LIBRARY_VERSION TRUE)
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND AND MPIEXEC_EXECUTABLE AND NOT NXRT_SANITIZE)
    set(launcher_flags)
    if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
      set(launcher_flags --allow-run-as-root --oversubscribe)
    endif()
    file(GLOB mpi_examples CONFIGURE_DEPENDS ${examples_dir}/mpi/*.c)
    foreach(source IN LISTS mpi_examples)
      get_filename_component(name ${source} NAME_WE)
      nxrt_example_model(${name} model)
      set(target example_mpi_${name})
      add_executable(${target} ${source})
      target_link_libraries(${target} PRIVATE nxrt::nxrt MPI::MPI_C m)
      add_test(NAME ${target}
               COMMAND ${MPIEXEC_EXECUTABLE} ${launcher_flags} ${MPIEXEC_NUMPROC_FLAG} 2
                       ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS} ${model_dir}/${model}.onnx)
      set_tests_properties(${target} PROPERTIES FIXTURES_REQUIRED example_models TIMEOUT 120)
    endforeach()
  else()
    message(STATUS "nxrt: MPI not found; the MPI example and its test are skipped")
  endif()
endfunction()
