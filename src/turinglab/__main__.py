from turinglab.cli import main

main()
