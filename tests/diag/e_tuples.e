BEGIN { @z[(1,2)] = 1; $t = (1, 2); $t = (1, "x"); @x = $t.5; @y = $t + 1; $u = (1, @c); }
gdev:kernel_exit { $d = (1, 2); }