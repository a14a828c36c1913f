! Fortran 2008 module over the nxrt C API (include/nxrt/nxrt.h), through iso_c_binding.
!
!   use nxrt
!   call nxrt_create_session(session, "model.onnx", intra_op_threads=1)
!   call nxrt_wrap(x_tensor, x)            ! zero-copy: x needs the TARGET attribute and must outlive x_tensor
!   call nxrt_create_io_binding(binding, session)
!   call nxrt_bind_input(binding, "x", x_tensor)
!   call nxrt_bind_output(binding, "z", z_tensor)   ! the run writes into z's memory
!   call nxrt_run(session, binding)
!   call nxrt_release(binding); call nxrt_release(z_tensor); ...
!
! Conventions
! - Arrays keep Fortran order: a Fortran array of shape (n1, n2) is the row-major ONNX tensor [n2, n1].
! - Every procedure takes an optional `status` (0 on success, else an NxrtStatusCode). Without it a failure
!   prints the message to error_unit and stops the program. nxrt_last_error() returns the message of the last
!   failure seen by this module (one module variable: not thread-safe; the C API itself is).
! - Indices (outputs of a binding) start at 1.
! - Handles are released with the generic nxrt_release; releasing a released or never-created handle is a no-op.
module nxrt
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private

  integer(c_int), parameter, public :: NXRT_TYPE_FLOAT = 1, NXRT_TYPE_INT32 = 6, NXRT_TYPE_INT64 = 7, &
                                        NXRT_TYPE_DOUBLE = 11
  integer(c_int), parameter, public :: NXRT_OK = 0, NXRT_INVALID_ARGUMENT = 2, NXRT_EP_FAIL = 11
  integer(c_int), parameter, public :: NXRT_DEVICE_CPU = 0, NXRT_DEVICE_CUDA = 1, NXRT_DEVICE_TEST = 2

  type, public :: nxrt_session
    type(c_ptr) :: handle = c_null_ptr
  end type nxrt_session

  type, public :: nxrt_tensor
    type(c_ptr) :: handle = c_null_ptr
  end type nxrt_tensor

  type, public :: nxrt_io_binding
    type(c_ptr) :: handle = c_null_ptr
  end type nxrt_io_binding

  public :: nxrt_version, nxrt_last_error, nxrt_create_session, nxrt_input_count, nxrt_output_count
  public :: nxrt_input_name, nxrt_output_name, nxrt_wrap, nxrt_create_io_binding, nxrt_bind_input
  public :: nxrt_bind_output, nxrt_run, nxrt_output_written_in_place, nxrt_release

  interface nxrt_wrap
    module procedure wrap_float_1d, wrap_float_2d, wrap_double_1d, wrap_int64_1d
  end interface nxrt_wrap

  interface nxrt_release
    module procedure release_session, release_tensor, release_io_binding
  end interface nxrt_release

  character(len=:), allocatable, save :: last_error

  interface
    function c_strlen(string) bind(C, name="strlen") result(length)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: string
      integer(c_size_t) :: length
    end function c_strlen
    function c_version_string() bind(C, name="nxrt_version_string") result(string)
      import :: c_ptr
      type(c_ptr) :: string
    end function c_version_string
    function c_status_code(status) bind(C, name="nxrt_status_code") result(code)
      import :: c_ptr, c_int
      type(c_ptr), value :: status
      integer(c_int) :: code
    end function c_status_code
    function c_status_string(status) bind(C, name="nxrt_status_string") result(string)
      import :: c_ptr
      type(c_ptr), value :: status
      type(c_ptr) :: string
    end function c_status_string
    subroutine c_release_status(status) bind(C, name="nxrt_release_status")
      import :: c_ptr
      type(c_ptr), value :: status
    end subroutine c_release_status
    function c_create_session_options(options) bind(C, name="nxrt_create_session_options") result(status)
      import :: c_ptr
      type(c_ptr), intent(out) :: options
      type(c_ptr) :: status
    end function c_create_session_options
    subroutine c_release_session_options(options) bind(C, name="nxrt_release_session_options")
      import :: c_ptr
      type(c_ptr), value :: options
    end subroutine c_release_session_options
    function c_set_intra_op_threads(options, threads) bind(C, name="nxrt_session_options_set_intra_op_threads") &
        result(status)
      import :: c_ptr, c_int
      type(c_ptr), value :: options
      integer(c_int), value :: threads
      type(c_ptr) :: status
    end function c_set_intra_op_threads
    function c_create_session(path, options, session) bind(C, name="nxrt_create_session") result(status)
      import :: c_ptr, c_char
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: session
      type(c_ptr) :: status
    end function c_create_session
    subroutine c_release_session(session) bind(C, name="nxrt_release_session")
      import :: c_ptr
      type(c_ptr), value :: session
    end subroutine c_release_session
    function c_create_tensor_with_data(element_type, dims, rank, data, data_bytes, tensor) &
        bind(C, name="nxrt_create_tensor_with_data") result(status)
      import :: c_ptr, c_int, c_int64_t, c_size_t
      integer(c_int), value :: element_type
      integer(c_int64_t), intent(in) :: dims(*)
      integer(c_size_t), value :: rank
      type(c_ptr), value :: data
      integer(c_size_t), value :: data_bytes
      type(c_ptr), intent(out) :: tensor
      type(c_ptr) :: status
    end function c_create_tensor_with_data
    subroutine c_release_tensor(tensor) bind(C, name="nxrt_release_tensor")
      import :: c_ptr
      type(c_ptr), value :: tensor
    end subroutine c_release_tensor
    function c_create_io_binding(session, binding) bind(C, name="nxrt_create_io_binding") result(status)
      import :: c_ptr
      type(c_ptr), value :: session
      type(c_ptr), intent(out) :: binding
      type(c_ptr) :: status
    end function c_create_io_binding
    subroutine c_release_io_binding(binding) bind(C, name="nxrt_release_io_binding")
      import :: c_ptr
      type(c_ptr), value :: binding
    end subroutine c_release_io_binding
    function c_run_with_binding(session, run_options, binding) bind(C, name="nxrt_session_run_with_binding") &
        result(status)
      import :: c_ptr
      type(c_ptr), value :: session, run_options, binding
      type(c_ptr) :: status
    end function c_run_with_binding
    function c_written_in_place(binding, index, flag) bind(C, name="nxrt_io_binding_output_was_written_in_place") &
        result(status)
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: binding
      integer(c_size_t), value :: index
      integer(c_int), intent(out) :: flag
      type(c_ptr) :: status
    end function c_written_in_place
  end interface

contains

  function to_fortran_string(string) result(text)
    type(c_ptr), intent(in) :: string
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: i, length
    if (.not. c_associated(string)) then
      text = ""
      return
    end if
    length = int(c_strlen(string))
    call c_f_pointer(string, chars, [length])
    allocate(character(len=length) :: text)
    do i = 1, length
      text(i:i) = chars(i)
    end do
  end function to_fortran_string

  function to_c_string(text) result(chars)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=len(text) + 1) :: chars
    chars = text // c_null_char
  end function to_c_string

  ! Consumes a C status: records and reports it through `status`, or stops the program when absent.
  subroutine check(c_status, what, status)
    type(c_ptr), intent(in) :: c_status
    character(len=*), intent(in) :: what
    integer, intent(out), optional :: status
    integer :: code
    if (.not. c_associated(c_status)) then
      if (present(status)) status = NXRT_OK
      return
    end if
    code = int(c_status_code(c_status))
    last_error = what // ": " // to_fortran_string(c_status_string(c_status))
    call c_release_status(c_status)
    if (present(status)) then
      status = code
    else
      write (error_unit, '(a)') last_error
      error stop 1
    end if
  end subroutine check

  function nxrt_version() result(version)
    character(len=:), allocatable :: version
    version = to_fortran_string(c_version_string())
  end function nxrt_version

  function nxrt_last_error() result(message)
    character(len=:), allocatable :: message
    if (allocated(last_error)) then
      message = last_error
    else
      message = ""
    end if
  end function nxrt_last_error

  ! intra_op_threads: as nxrt_session_options_set_intra_op_threads (0 or absent: one per core).
  subroutine nxrt_create_session(session, model_path, intra_op_threads, status)
    type(nxrt_session), intent(out) :: session
    character(len=*), intent(in) :: model_path
    integer, intent(in), optional :: intra_op_threads
    integer, intent(out), optional :: status
    type(c_ptr) :: options
    integer :: local_status
    call check(c_create_session_options(options), "nxrt_create_session_options", local_status)
    if (local_status == NXRT_OK .and. present(intra_op_threads)) then
      call check(c_set_intra_op_threads(options, int(intra_op_threads, c_int)), "set intra_op_threads", local_status)
    end if
    if (local_status == NXRT_OK) then
      call check(c_create_session(to_c_string(model_path), options, session%handle), "nxrt_create_session", &
                 local_status)
    end if
    call c_release_session_options(options)
    if (present(status)) then
      status = local_status
    else if (local_status /= NXRT_OK) then
      write (error_unit, '(a)') last_error
      error stop 1
    end if
  end subroutine nxrt_create_session

  integer function nxrt_input_count(session) result(count)
    type(nxrt_session), intent(in) :: session
    count = session_count(session, .false.)
  end function nxrt_input_count

  integer function nxrt_output_count(session) result(count)
    type(nxrt_session), intent(in) :: session
    count = session_count(session, .true.)
  end function nxrt_output_count

  integer function session_count(session, outputs) result(count)
    type(nxrt_session), intent(in) :: session
    logical, intent(in) :: outputs
    integer(c_size_t) :: c_count
    interface
      function c_input_count(session, count) bind(C, name="nxrt_session_get_input_count") result(status)
        import :: c_ptr, c_size_t
        type(c_ptr), value :: session
        integer(c_size_t), intent(out) :: count
        type(c_ptr) :: status
      end function c_input_count
      function c_output_count(session, count) bind(C, name="nxrt_session_get_output_count") result(status)
        import :: c_ptr, c_size_t
        type(c_ptr), value :: session
        integer(c_size_t), intent(out) :: count
        type(c_ptr) :: status
      end function c_output_count
    end interface
    if (outputs) then
      call check(c_output_count(session%handle, c_count), "nxrt_session_get_output_count")
    else
      call check(c_input_count(session%handle, c_count), "nxrt_session_get_input_count")
    end if
    count = int(c_count)
  end function session_count

  ! Name of input `index` (1-based).
  function nxrt_input_name(session, index) result(name)
    type(nxrt_session), intent(in) :: session
    integer, intent(in) :: index
    character(len=:), allocatable :: name
    interface
      function c_input_name(session, index, name) bind(C, name="nxrt_session_get_input_name") result(status)
        import :: c_ptr, c_size_t
        type(c_ptr), value :: session
        integer(c_size_t), value :: index
        type(c_ptr), intent(out) :: name
        type(c_ptr) :: status
      end function c_input_name
    end interface
    type(c_ptr) :: c_name
    call check(c_input_name(session%handle, int(index - 1, c_size_t), c_name), "nxrt_session_get_input_name")
    name = to_fortran_string(c_name)
  end function nxrt_input_name

  ! Name of output `index` (1-based).
  function nxrt_output_name(session, index) result(name)
    type(nxrt_session), intent(in) :: session
    integer, intent(in) :: index
    character(len=:), allocatable :: name
    interface
      function c_output_name(session, index, name) bind(C, name="nxrt_session_get_output_name") result(status)
        import :: c_ptr, c_size_t
        type(c_ptr), value :: session
        integer(c_size_t), value :: index
        type(c_ptr), intent(out) :: name
        type(c_ptr) :: status
      end function c_output_name
    end interface
    type(c_ptr) :: c_name
    call check(c_output_name(session%handle, int(index - 1, c_size_t), c_name), "nxrt_session_get_output_name")
    name = to_fortran_string(c_name)
  end function nxrt_output_name

  ! Zero-copy tensors over Fortran arrays (dims reversed into ONNX row-major order).
  subroutine wrap(tensor, element_type, fortran_shape, data, data_bytes, status)
    type(nxrt_tensor), intent(out) :: tensor
    integer(c_int), intent(in) :: element_type
    integer, intent(in) :: fortran_shape(:)
    type(c_ptr), intent(in) :: data
    integer(c_size_t), intent(in) :: data_bytes
    integer, intent(out), optional :: status
    integer(c_int64_t) :: dims(size(fortran_shape))
    integer :: d
    do d = 1, size(fortran_shape)
      dims(d) = int(fortran_shape(size(fortran_shape) + 1 - d), c_int64_t)
    end do
    call check(c_create_tensor_with_data(element_type, dims, int(size(dims), c_size_t), data, data_bytes, &
                                         tensor%handle), "nxrt_create_tensor_with_data", status)
  end subroutine wrap

  integer(c_size_t) function bytes_of(element_bits, count) result(bytes)
    integer, intent(in) :: element_bits, count
    bytes = int(element_bits / 8, c_size_t) * int(count, c_size_t)
  end function bytes_of

  subroutine wrap_float_1d(tensor, array, status)
    type(nxrt_tensor), intent(out) :: tensor
    real(c_float), intent(in), target, contiguous :: array(:)
    integer, intent(out), optional :: status
    call wrap(tensor, NXRT_TYPE_FLOAT, shape(array), c_loc(array), bytes_of(storage_size(array), size(array)), status)
  end subroutine wrap_float_1d

  subroutine wrap_float_2d(tensor, array, status)
    type(nxrt_tensor), intent(out) :: tensor
    real(c_float), intent(in), target, contiguous :: array(:, :)
    integer, intent(out), optional :: status
    call wrap(tensor, NXRT_TYPE_FLOAT, shape(array), c_loc(array), bytes_of(storage_size(array), size(array)), status)
  end subroutine wrap_float_2d

  subroutine wrap_double_1d(tensor, array, status)
    type(nxrt_tensor), intent(out) :: tensor
    real(c_double), intent(in), target, contiguous :: array(:)
    integer, intent(out), optional :: status
    call wrap(tensor, NXRT_TYPE_DOUBLE, shape(array), c_loc(array), bytes_of(storage_size(array), size(array)), status)
  end subroutine wrap_double_1d

  subroutine wrap_int64_1d(tensor, array, status)
    type(nxrt_tensor), intent(out) :: tensor
    integer(c_int64_t), intent(in), target, contiguous :: array(:)
    integer, intent(out), optional :: status
    call wrap(tensor, NXRT_TYPE_INT64, shape(array), c_loc(array), bytes_of(storage_size(array), size(array)), status)
  end subroutine wrap_int64_1d

  subroutine nxrt_create_io_binding(binding, session, status)
    type(nxrt_io_binding), intent(out) :: binding
    type(nxrt_session), intent(in) :: session
    integer, intent(out), optional :: status
    call check(c_create_io_binding(session%handle, binding%handle), "nxrt_create_io_binding", status)
  end subroutine nxrt_create_io_binding

  subroutine nxrt_bind_input(binding, name, tensor, status)
    type(nxrt_io_binding), intent(in) :: binding
    character(len=*), intent(in) :: name
    type(nxrt_tensor), intent(in) :: tensor
    integer, intent(out), optional :: status
    call check(c_bind_named(binding%handle, name, tensor%handle, .false.), "nxrt_io_binding_bind_input", status)
  end subroutine nxrt_bind_input

  ! The run writes output `name` into `tensor`'s memory (in place when its type and shape match).
  subroutine nxrt_bind_output(binding, name, tensor, status)
    type(nxrt_io_binding), intent(in) :: binding
    character(len=*), intent(in) :: name
    type(nxrt_tensor), intent(in) :: tensor
    integer, intent(out), optional :: status
    call check(c_bind_named(binding%handle, name, tensor%handle, .true.), "nxrt_io_binding_bind_output", status)
  end subroutine nxrt_bind_output

  function c_bind_named(binding, name, tensor, output) result(c_status)
    type(c_ptr), intent(in) :: binding, tensor
    character(len=*), intent(in) :: name
    logical, intent(in) :: output
    type(c_ptr) :: c_status
    interface
      function c_bind_input(binding, name, tensor) bind(C, name="nxrt_io_binding_bind_input") result(status)
        import :: c_ptr, c_char
        type(c_ptr), value :: binding
        character(kind=c_char), intent(in) :: name(*)
        type(c_ptr), value :: tensor
        type(c_ptr) :: status
      end function c_bind_input
      function c_bind_output(binding, name, tensor) bind(C, name="nxrt_io_binding_bind_output") result(status)
        import :: c_ptr, c_char
        type(c_ptr), value :: binding
        character(kind=c_char), intent(in) :: name(*)
        type(c_ptr), value :: tensor
        type(c_ptr) :: status
      end function c_bind_output
    end interface
    if (output) then
      c_status = c_bind_output(binding, to_c_string(name), tensor)
    else
      c_status = c_bind_input(binding, to_c_string(name), tensor)
    end if
  end function c_bind_named

  subroutine nxrt_run(session, binding, status)
    type(nxrt_session), intent(in) :: session
    type(nxrt_io_binding), intent(in) :: binding
    integer, intent(out), optional :: status
    call check(c_run_with_binding(session%handle, c_null_ptr, binding%handle), "nxrt_session_run_with_binding", &
               status)
  end subroutine nxrt_run

  ! True when the last run wrote output `index` (1-based, binding order) straight into the bound array.
  logical function nxrt_output_written_in_place(binding, index) result(in_place)
    type(nxrt_io_binding), intent(in) :: binding
    integer, intent(in) :: index
    integer(c_int) :: flag
    call check(c_written_in_place(binding%handle, int(index - 1, c_size_t), flag), &
               "nxrt_io_binding_output_was_written_in_place")
    in_place = flag /= 0
  end function nxrt_output_written_in_place

  subroutine release_session(session)
    type(nxrt_session), intent(inout) :: session
    call c_release_session(session%handle)
    session%handle = c_null_ptr
  end subroutine release_session

  subroutine release_tensor(tensor)
    type(nxrt_tensor), intent(inout) :: tensor
    call c_release_tensor(tensor%handle)
    tensor%handle = c_null_ptr
  end subroutine release_tensor

  subroutine release_io_binding(binding)
    type(nxrt_io_binding), intent(inout) :: binding
    call c_release_io_binding(binding%handle)
    binding%handle = c_null_ptr
  end subroutine release_io_binding

end module nxrt
