! Deployment workflow in Fortran: the builtin "simple_add" model (z = 2 * x + y, symbolic batch "B") run on
! Fortran arrays through an IO binding: x and y are read in place and z is written in place, no copies.
! usage: example_fortran_simple_add_io_binding MODEL.onnx
program simple_add_io_binding
  use, intrinsic :: iso_c_binding, only: c_float
  use nxrt
  implicit none
  integer, parameter :: batch = 6
  real(c_float), target :: x(batch), y(batch), z(batch)
  type(nxrt_session) :: session
  type(nxrt_tensor) :: x_tensor, y_tensor, z_tensor
  type(nxrt_io_binding) :: binding
  character(len=4096) :: model_path
  integer :: i

  if (command_argument_count() /= 1) error stop "usage: example_fortran_simple_add_io_binding MODEL.onnx"
  call get_command_argument(1, model_path)
  x = [(real(i, c_float), i = 1, batch)]
  y = 10 * x
  z = -1

  call nxrt_create_session(session, trim(model_path), intra_op_threads=1)
  print '(a, a, a, i0, a, a)', 'nxrt ', nxrt_version(), ': ', nxrt_input_count(session), ' inputs, first ', &
        nxrt_input_name(session, 1)
  call nxrt_wrap(x_tensor, x)
  call nxrt_wrap(y_tensor, y)
  call nxrt_wrap(z_tensor, z)
  call nxrt_create_io_binding(binding, session)
  call nxrt_bind_input(binding, "x", x_tensor)
  call nxrt_bind_input(binding, "y", y_tensor)
  call nxrt_bind_output(binding, nxrt_output_name(session, 1), z_tensor)
  call nxrt_run(session, binding)

  print '(a, *(f6.1))', 'z =', z
  if (.not. nxrt_output_written_in_place(binding, 1)) error stop "z was copied instead of written in place"
  if (any(abs(z - (2 * x + y)) > 1e-6)) error stop "z /= 2 * x + y"

  call nxrt_release(binding)
  call nxrt_release(z_tensor)
  call nxrt_release(y_tensor)
  call nxrt_release(x_tensor)
  call nxrt_release(session)
end program simple_add_io_binding
