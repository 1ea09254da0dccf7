from aletheia.entry import main

main()
