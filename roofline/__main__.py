from roofline.cli import main

raise SystemExit(main())
