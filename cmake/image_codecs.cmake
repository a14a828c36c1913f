# Optional image codec libraries for the ImageDecoder kernel (src/ep/cpu/image/image_codec_*.cpp).
# Include right after the nxrt_objects target is defined. Each library that is found adds a compile
# definition NXRT_HAVE_<LIB> to nxrt_objects; its link is added to nxrt_static (PUBLIC, so executables and the
# Python extension get it) and to the shared nxrt (PRIVATE) once those targets exist, through a deferred call.
# A codec whose library is missing reports NOT_IMPLEMENTED at run time. Debian packages:
#   libpng-dev libjpeg62-turbo-dev libtiff-dev libwebp-dev libopenjp2-7-dev
option(NXRT_IMAGE_CODECS "Decode PNG/JPEG/TIFF/WebP/JPEG 2000 in ImageDecoder with system libraries when found" ON)

set(NXRT_IMAGE_CODEC_LIBS "")
set(NXRT_IMAGE_CODECS_FOUND "")

function(nxrt_add_image_codec definition target label)
  target_compile_definitions(nxrt_objects PRIVATE ${definition})
  # Object libraries take include paths and definitions from their link items.
  target_link_libraries(nxrt_objects PRIVATE ${target})
  set(NXRT_IMAGE_CODEC_LIBS ${NXRT_IMAGE_CODEC_LIBS} ${target} PARENT_SCOPE)
  set(NXRT_IMAGE_CODECS_FOUND ${NXRT_IMAGE_CODECS_FOUND} ${label} PARENT_SCOPE)
endfunction()

if(NXRT_IMAGE_CODECS)
  find_package(PNG QUIET)
  if(TARGET PNG::PNG)
    nxrt_add_image_codec(NXRT_HAVE_LIBPNG PNG::PNG png)
  endif()
  find_package(JPEG QUIET)
  if(TARGET JPEG::JPEG)
    nxrt_add_image_codec(NXRT_HAVE_LIBJPEG JPEG::JPEG jpeg)
  endif()
  find_package(TIFF QUIET)
  if(TARGET TIFF::TIFF)
    nxrt_add_image_codec(NXRT_HAVE_LIBTIFF TIFF::TIFF tiff)
  endif()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(NXRT_WEBP QUIET IMPORTED_TARGET libwebp)
    if(TARGET PkgConfig::NXRT_WEBP)
      nxrt_add_image_codec(NXRT_HAVE_LIBWEBP PkgConfig::NXRT_WEBP webp)
    endif()
    pkg_check_modules(NXRT_OPENJPEG QUIET IMPORTED_TARGET libopenjp2)
    if(TARGET PkgConfig::NXRT_OPENJPEG)
      nxrt_add_image_codec(NXRT_HAVE_OPENJPEG PkgConfig::NXRT_OPENJPEG openjpeg)
    endif()
  endif()
endif()
list(JOIN NXRT_IMAGE_CODECS_FOUND " " nxrt_image_codecs_text)
message(STATUS "ImageDecoder codecs: bmp pnm ${nxrt_image_codecs_text}")

# nxrt_static and nxrt are created from $<TARGET_OBJECTS:nxrt_objects> after this file is included, so they
# get the link items at the end of the directory.
function(nxrt_link_image_codecs)
  if(NXRT_IMAGE_CODEC_LIBS)
    if(TARGET nxrt_static)
      target_link_libraries(nxrt_static PUBLIC ${NXRT_IMAGE_CODEC_LIBS})
    endif()
    if(TARGET nxrt)
      target_link_libraries(nxrt PRIVATE ${NXRT_IMAGE_CODEC_LIBS})
    endif()
  endif()
endfunction()
cmake_language(DEFER CALL nxrt_link_image_codecs)
